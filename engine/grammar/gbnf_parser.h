// GBNF text -> Rules, in llama.cpp's dialect:
//   name ::= alternatives            rule (names: letters, digits, '-', '_')
//   a b | c                          sequence, alternatives; ( ... ) groups
//   "lit\n"  [a-z\x41^...]  .        literals, classes (ranges, negation), any code point
//   x* x+ x? x{m} x{m,} x{m,n}       repetition
//   <[id]> !<[id]> <piece>           tokens, by id or by the exact piece of one token
//   # comment
// Newlines end a rule except after '::=', after '|', inside parentheses, or (an extension) when the
// next line starts with '|'. Errors are GrammarError with line, column and reason.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "engine/grammar/gbnf_rules.h"

namespace engine::gbnf {

// Resolves `<piece>` token references: the id of the one token whose piece is exactly `text`.
using TokenLookup = std::function<std::optional<int32_t>(std::string_view text)>;

// Parses and validates (undefined rules, duplicate definitions, left recursion, size limits).
// Without a lookup, `<piece>` references are an error; `<[id]>` always parses.
Rules parse_gbnf(std::string_view text, const TokenLookup& lookup = nullptr);

// Largest repetition bound accepted in x{m,n}; larger bounds are rejected as absurd.
constexpr uint64_t kMaxRepetition = 10000;
// Largest grammar (in elements, after expanding repetitions) accepted.
constexpr size_t kMaxElements = size_t(1) << 21;

// Deepest parenthesis nesting accepted (deeper text is a GrammarError naming the limit).
constexpr size_t kMaxNesting = 500;
// Most matcher stacks a grammar may expand to (see check_expansion).
constexpr uint64_t kMaxExpansion = 250000;

// Throws GrammarError when the grammar reachable from `root` has more than `limit` distinct stacks
// the matcher may have to track at once (paths of rule references from the root to a terminal
// element, those differing only in tail references counted once; nested bounded repetitions
// multiply them). Run by the Grammar constructor.
void check_expansion(const Rules& rules, uint32_t root, std::string_view text, uint64_t limit = kMaxExpansion);

// Line and 1-based column (in code points) of a byte offset.
void line_column(std::string_view text, size_t offset, int& line, int& column);

// Checks that rule `root` exists; throws GrammarError otherwise.
uint32_t find_root(const Rules& rules, std::string_view root);

// Left-recursion check, run by parse_gbnf (exposed for grammars built in code). Throws GrammarError
// positioned with `text`.
void check_left_recursion(const Rules& rules, std::string_view text);

// Which rules can match the empty text.
std::vector<bool> nullable_rules(const Rules& rules);

// Rewrites every unbounded repetition whose item can match "" (`("a"?)*`) to repeat the item minus ""
// (the same language, without the loop the matcher would otherwise expand forever). Run by parse_gbnf
// before the left-recursion check; a GrammarError positioned with `text` when the rewrite would add
// more than kMaxElements elements.
void remove_empty_repeat_items(Rules& rules, std::string_view text);

}  // namespace engine::gbnf
