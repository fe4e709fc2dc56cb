// A JSON Schema (draft 2020-12) validator for the subset our request schemas use: type (also a list of
// types), enum, const, minimum/maximum/exclusiveMinimum/exclusiveMaximum, minLength/maxLength,
// items/prefixItems/minItems/maxItems, properties/required/additionalProperties, allOf/anyOf/oneOf/not,
// $ref/$defs (also to another document of the set: "other.json#/$defs/x"). Annotations (title,
// description, default, examples, format, ...) are ignored; any other keyword is rejected when the
// schema is loaded, so a schema never silently validates less than it says.
//
// It reports the first violation with the JSON pointer of the offending value: "/max_tokens: must be
// >= 0"; a missing required property is reported where it is missing: "/messages: is required". When no
// branch of an anyOf/oneOf matches, the most specific failure is reported (the deepest one, and among
// those the one past a discriminator), and failures of the same value are merged ("must be string or
// array").
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace server::http {

struct ValidationError {
    std::string pointer;  // JSON pointer of the offending value; "" is the whole document
    std::string message;  // "must be >= 0"

    // "/max_tokens: must be >= 0"; the whole document shows as "/".
    std::string to_string() const;
};

// A schema that uses an unsupported keyword, a malformed keyword value or an unresolvable $ref.
class SchemaError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

class JsonSchemaValidator {
  public:
    // A set of named documents ("chat_completions.json" -> schema). Throws SchemaError.
    explicit JsonSchemaValidator(std::map<std::string, nlohmann::json> documents);
    // A single anonymous document.
    explicit JsonSchemaValidator(nlohmann::json schema);
    ~JsonSchemaValidator();
    JsonSchemaValidator(JsonSchemaValidator&&) noexcept;
    JsonSchemaValidator& operator=(JsonSchemaValidator&&) noexcept;

    // Validates against document `name`; throws std::out_of_range for an unknown name.
    std::optional<ValidationError> validate(std::string_view name, const nlohmann::json& instance) const;
    // Validates against the single (or first) document.
    std::optional<ValidationError> validate(const nlohmann::json& instance) const;

    bool has_document(std::string_view name) const;
    std::vector<std::string> document_names() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace server::http
