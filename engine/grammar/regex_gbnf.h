// The regex -> GBNF translation behind both modes of schema_pattern.h (JSON string contents and raw
// text): a regex.h tree written as one GBNF expression, with the character encoding as a parameter.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/grammar/regex.h"

namespace engine::gbnf {

// Whether n matches the empty string.
bool regex_nullable(const RegexNode& n);
// A node matching the non-empty strings of n (nullopt if it has none). GBNF rejects repeating an
// item that can match "", so x* with a nullable x is written as (x without "")*.
std::optional<RegexNode> regex_non_empty(const RegexNode& n);

// How a set of code points is written: as JSON string characters, or as themselves.
using CharsToGbnf = std::string (*)(const CharSet&);
// The set as raw text (one class); throws std::invalid_argument for an empty set.
std::string raw_chars(const CharSet& set);

// n as a GBNF expression ("" for the empty string). Throws std::invalid_argument for an anchor (only
// allowed at a pattern's ends, see TopAlternative) or a class that matches nothing.
std::string regex_to_gbnf(const RegexNode& n, CharsToGbnf chars);

// One top-level alternative of a pattern without its anchors: a leading ^ and a trailing $ say that
// the match starts at the text's start or ends at its end; without them any text may come before
// or after (a pattern is searched for, as JSON Schema says).
struct TopAlternative {
    bool begin = false, end = false;
    std::vector<const RegexNode*> parts;
};
// The top-level alternatives of a parsed pattern.
std::vector<TopAlternative> top_alternatives(const Regex& re);

}  // namespace engine::gbnf
