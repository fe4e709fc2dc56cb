// JSON Schema -> GBNF, in the style of llama.cpp's converter (same whitespace rule, same layout of
// objects: required properties first, then optional ones in schema order), with exact number
// ranges, string patterns and a clear error for anything it cannot express.
//
// Supported: type (and type arrays), properties, required, additionalProperties (false / true /
// schema; absent means no extra properties, as in llama.cpp), enum, const, items, prefixItems,
// items-as-array + additionalItems, minItems, maxItems, anyOf, oneOf (treated as anyOf), allOf
// (merged), $ref to local pointers (#, #/$defs/..., #/definitions/..., recursion allowed),
// minimum / maximum / exclusiveMinimum / exclusiveMaximum for integers and numbers, minLength,
// maxLength, pattern, format (date, time, date-time, uuid, email, ipv4; other formats are
// annotations and do not constrain). Annotations (title, description, default, examples, ...)
// and unknown keywords are ignored, as JSON Schema prescribes.
//
// Rejected with SchemaError: not, if/then/else, dependentSchemas, dependentRequired,
// dependencies, uniqueItems: true, multipleOf, patternProperties, propertyNames,
// minProperties, maxProperties, contains, minContains, maxContains, unevaluatedProperties,
// unevaluatedItems, $dynamicRef, $recursiveRef, non-local $ref, and constraints that cannot be
// satisfied or combined (e.g. two different patterns under allOf).
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace engine {

struct SchemaError : std::invalid_argument {
    std::string pointer;  // JSON pointer to the offending keyword ("" for the whole schema)
    std::string reason;
    SchemaError(std::string pointer_, std::string reason_)
        : std::invalid_argument(reason_ + " (at '" + pointer_ + "')"),
          pointer(std::move(pointer_)),
          reason(std::move(reason_)) {}
};

// Keeps the schema's property order (use this one for request bodies parsed as ordered_json).
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema);
// nlohmann::json sorts object keys, so properties come out in alphabetical order.
std::string json_schema_to_gbnf(const nlohmann::json& schema);
// Any JSON object: response_format {"type": "json_object"}.
std::string json_object_gbnf();

// GBNF (rule "root") for a string's value written as raw text, as the XML-like tool-call formats
// write a string parameter between its tags: no quotes, no escapes, and never `close_tag` (which
// starts with '<' and has no other '<') inside, so the text ends where the tag starts. The value
// follows the schema: enum/const values as alternatives; pattern (schema_pattern.h raw mode: the
// regex intersected with "does not contain the tag"); format date, time, date-time, uuid, email,
// ipv4 (their text has no '<'); minLength/maxLength as a bounded run without '<'; else any text
// without the tag. SchemaError (pointer relative to the schema) for an unsupported pattern, a
// pattern or format with a length limit, or a pattern no text without the tag can match.
std::string raw_string_schema_to_gbnf(const nlohmann::ordered_json& schema, std::string_view close_tag);

}  // namespace engine
