// A small backtracking regular-expression engine over Unicode code points, for the pre-tokenizer
// patterns of byte-level BPE vocabularies (std::regex has no \p{L}).
//
// Syntax (ECMAScript-like, leftmost match, first alternative wins, greedy by default): literals
// (UTF-8), `.`, classes `[...]` / `[^...]` with ranges, escapes \s \S \d \D \w \W \r \n \t \f \v
// \xHH \uHHHH, Unicode categories \p{L} \p{Lu} ... \P{..} (also inside classes), groups `(...)` and
// `(?:...)` (nothing is captured), lookaheads `(?=...)` `(?!...)`, anchors `^` `$` `\b` `\B`,
// quantifiers `? * + {m} {m,} {m,n}` with an optional lazy `?`. A quantified group that can match the
// empty string without an upper bound is rejected. \s is the White_Space property; \d and \w are
// ASCII as in ECMAScript.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engine {

class Regex {
  public:
    // Throws std::invalid_argument naming the pattern and the offending position.
    explicit Regex(std::string_view pattern);

    // End of the first-priority match that starts exactly at pos, or -1. The text is cps[begin, end):
    // lookaheads, `$` and `\b` see nothing outside it. With nonempty, empty matches are skipped.
    long match_at(const uint32_t* cps, size_t begin, size_t end, size_t pos, bool nonempty = false) const;

    // Splits cps[begin, end) the way a regex iterator walks it: every match and every stretch between
    // matches becomes a piece; appends the piece lengths (empty pieces are dropped).
    void split(const uint32_t* cps, size_t begin, size_t end, std::vector<size_t>& lengths) const;

    // Whether the pattern uses \p{..} categories (llama.cpp treats such patterns differently).
    bool uses_categories() const { return uses_categories_; }
    const std::string& pattern() const { return pattern_; }

    enum class Op : uint8_t { Char, Run, Split, Jmp, Begin, End, WordB, NotWordB, Look, Match };
    struct Inst {
        Op op;
        bool flag = false;  // Run: greedy; Look: negated
        int a = 0;          // Char/Run: predicate; Split: preferred target; Jmp: target; Look: program
        int b = 0;          // Split: other target
        int min = 0;        // Run
        int max = -1;       // Run (-1: unbounded)
    };
    struct ClassItem {
        enum Kind : uint8_t { Range, Categories, Space, Digit, Word } kind;
        bool negated = false;  // \S \D \W \P{..}
        uint32_t lo = 0, hi = 0;
        uint32_t categories = 0;
    };
    struct CharClass {
        bool negated = false;
        std::vector<ClassItem> items;
    };

  private:
    friend struct RegexCompiler;
    bool pred(int index, uint32_t cp) const;
    long run(int program, const uint32_t* cps, size_t begin, size_t end, size_t pos, bool nonempty) const;

    std::string pattern_;
    bool uses_categories_ = false;
    std::vector<CharClass> classes_;
    std::vector<std::vector<int>> preds_;      // a code point matches when every listed class matches
    std::vector<std::vector<Inst>> programs_;  // [0] is the pattern, the rest are lookaheads
};

}  // namespace engine
