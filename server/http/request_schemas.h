// Validation of API request bodies against the embedded schemas/ (see schemas/*.json). Names are the
// file names with or without ".json": "chat_completions", "completions", "completion", "tokenize",
// "detokenize", "apply_template", "embeddings", "slots_action", "responses", "messages", ...
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/json_schema_validator.h"
#include "server/http/message.h"

namespace server::http {

// Names of the embedded schema files ("chat_completions.json", ...), sorted.
std::vector<std::string> request_schema_names();

// The text of an embedded schema file.
std::optional<std::string_view> request_schema_text(std::string_view name);

// All embedded schemas, loaded once (thread-safe).
const JsonSchemaValidator& request_schemas();

// Validates `body`; throws std::out_of_range for an unknown schema name.
std::optional<ValidationError> validate_request(std::string_view schema, const nlohmann::json& body);

// Parses req.body as JSON (an empty body counts as {}) and validates it against `schema`. Throws
// HttpError(400) with "invalid JSON in request body: ...", "/max_tokens: must be >= 0", or for a body nested
// deeper than kMaxJsonDepth (json_depth.h), a message naming that limit; nothing deeper is ever parsed.
nlohmann::json parse_request_body(const Request& req, std::string_view schema);

}  // namespace server::http
