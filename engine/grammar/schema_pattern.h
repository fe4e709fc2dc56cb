// JSON Schema `pattern` -> GBNF for the inside of a JSON string. The regex (regex.h subset) is
// matched against the decoded string, so characters are emitted in their JSON-encoded form ('"'
// as \", control characters as escapes). Unanchored patterns are searched for, as the spec says:
// a missing ^ or $ lets any characters come before or after. Anchors elsewhere are rejected.
#pragma once

#include <string>
#include <string_view>

namespace engine::gbnf {

// GBNF expression for the string contents; `char_rule` names a rule matching any one JSON string
// character (used for unanchored ends). Throws RegexError or std::invalid_argument.
std::string pattern_to_gbnf(std::string_view pattern, const std::string& char_rule);

}  // namespace engine::gbnf
