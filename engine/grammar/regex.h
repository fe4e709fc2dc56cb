// A regular-expression parser for the ECMAScript subset that both JSON Schema `pattern` and lazy
// grammar trigger patterns need: literals and escapes (\d \w \s \D \W \S \n \t \xHH \uHHHH
// \u{...}), classes with ranges and negation, '.', groups ((...), (?:...), (?<name>...)),
// alternation, quantifiers * + ? {n} {n,} {n,m} with lazy variants, and the anchors ^ $.
// Backreferences, lookaround, word boundaries and Unicode property escapes are rejected with a
// RegexError naming the offset, so nothing is silently ignored.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/char_set.h"

namespace engine::gbnf {

struct RegexError : std::invalid_argument {
    size_t position;  // byte offset in the pattern
    RegexError(size_t pos, const std::string& msg)
        : std::invalid_argument(msg + " (at offset " + std::to_string(pos) + ")"), position(pos) {}
};

constexpr uint32_t kRegexUnbounded = UINT32_MAX;
constexpr uint32_t kRegexMaxRepeat = 10000;
// Deepest group nesting accepted: the tree and everything that walks it (matching, translation to
// GBNF) recurse once per level, so deeper patterns are rejected with a RegexError naming the limit.
constexpr uint32_t kRegexMaxNesting = 100;

struct RegexNode {
    enum class Kind : uint8_t { Empty, Chars, Concat, Alt, Repeat, Group, Begin, End };
    RegexNode() = default;
    explicit RegexNode(Kind k) : kind(k) {}

    Kind kind = Kind::Empty;
    CharSet chars;                // Chars
    std::vector<RegexNode> kids;  // Concat/Alt: parts; Repeat/Group: one child
    uint32_t min = 0;             // Repeat
    uint32_t max = 0;             // Repeat; kRegexUnbounded for no limit
    bool greedy = true;           // Repeat
    int capture = -1;             // Group: capture index (1-based), -1 for (?:...)
};

struct Regex {
    RegexNode root;
    int captures = 0;
};

struct RegexOptions {
    // \s as ASCII whitespace only (a subset of ECMAScript's \s that every regex flavour agrees
    // on); used when generating text that must match, not when searching.
    bool ascii_space = false;
};

Regex parse_regex(std::string_view pattern, RegexOptions options = {});

// ECMAScript character classes, shared with the JSON-Schema converter.
CharSet regex_class_digit();
CharSet regex_class_word();
CharSet regex_class_space();
CharSet regex_class_dot();  // '.': anything but line terminators

}  // namespace engine::gbnf
