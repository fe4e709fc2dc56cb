// A bound on the nesting depth of JSON text, checked before nlohmann builds a tree: everything that
// later walks a request body (schema validation, dump, JSON Schema -> grammar, the chat templates)
// recurses once per level, so a body nested 100,000 deep would overflow the stack of the thread that
// walks it. The scan is iterative and linear; it assumes nothing about validity (the parser that
// follows reports syntax errors).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace server::http {

// Deepest nesting of arrays and objects a request body may have.
constexpr std::size_t kMaxJsonDepth = 256;

// The byte offset of the first '[' or '{' that opens level `limit + 1`, or nullopt if the text
// never nests deeper than `limit` (brackets inside strings do not count).
std::optional<std::size_t> json_depth_exceeded(std::string_view text, std::size_t limit = kMaxJsonDepth);

}  // namespace server::http
