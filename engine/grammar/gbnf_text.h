// Writing GBNF text: literals, character classes and rule names, escaped so that parse_gbnf reads
// back exactly the given characters.
#pragma once

#include <string>
#include <string_view>

#include "engine/grammar/char_set.h"

namespace engine::gbnf {

// "..." matching exactly `text` (UTF-8).
std::string gbnf_literal(std::string_view text);
// [...] or [^...] (whichever is shorter) matching exactly the code points of `set` (not empty).
std::string gbnf_class(const CharSet& set);
// A rule name from arbitrary text: runs of characters outside [a-zA-Z0-9-] become '-'.
std::string gbnf_rule_name(std::string_view text);

}  // namespace engine::gbnf
