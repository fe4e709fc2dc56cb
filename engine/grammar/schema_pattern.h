// JSON Schema `pattern` -> GBNF, in two modes. Both search for the regex (regex.h subset) as the spec
// says: a missing ^ or $ lets any characters come before or after; anchors elsewhere are rejected.
//
// - Inside a JSON string: the regex is matched against the decoded string, so characters are
//   emitted in their JSON-encoded form ('"' as \", control characters as escapes).
// - Raw text (a string parameter written between the tags of an XML-like tool-call format): the
//   characters stand for themselves, and the text must never contain the closing tag that ends it.
//   The grammar is the exact intersection of the pattern with "does not contain the tag", pruned
//   so that every prefix it accepts can still be completed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace engine::gbnf {

// GBNF expression for the string contents; `char_rule` names a rule matching any one JSON string
// character (used for unanchored ends). Throws RegexError or std::invalid_argument.
std::string pattern_to_gbnf(std::string_view pattern, const std::string& char_rule);

// The most rules the raw mode writes for one pattern: the intersection has up to one rule per
// position in the pattern (counted repeats unrolled) and per character of the tag matched so far.
constexpr size_t kMaxRawPatternRules = 20000;

// GBNF rules for raw text that matches `pattern` and does not contain `close_tag` (which starts with
// '<' and has no other '<', so what follows the text, the tag itself, cannot complete an earlier
// partial tag). The rule `name` matches the text; helper rules are named `name`-N. Throws RegexError,
// or std::invalid_argument when no text fits or the intersection needs more than
// kMaxRawPatternRules rules.
std::string raw_pattern_to_gbnf(std::string_view pattern, std::string_view close_tag, const std::string& name);

}  // namespace engine::gbnf
