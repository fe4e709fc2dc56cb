// A Pike VM for the regex subset of regex.h: leftmost-first (ECMAScript-like) search with capture
// groups, fed incrementally so a growing text is scanned once. Used by lazy grammar triggers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/grammar/regex.h"
#include "engine/grammar/utf8.h"

namespace engine::gbnf {

struct RegexProgram {
    enum class Op : uint8_t { Char, Split, Jmp, Save, Match, Begin, End };
    struct Inst {
        Op op;
        uint32_t x = 0, y = 0;  // Char: set index; Split: preferred, other; Jmp: target; Save: slot
    };
    std::vector<Inst> code;
    std::vector<CharSet> sets;
    int slots = 2;  // 2 per capture group, group 0 = whole match

    // Throws RegexError if the compiled program would be unreasonably large.
    static std::shared_ptr<const RegexProgram> compile(const Regex& re);
};

// Searches a text that arrives in pieces. After each feed(), match() reports the match that a
// search over the text so far would return, treating the current end as the end of input.
class RegexSearch {
  public:
    explicit RegexSearch(std::shared_ptr<const RegexProgram> prog);

    void feed(std::string_view bytes);
    struct Match {
        size_t begin, end;            // byte offsets of the whole match
        std::vector<int64_t> groups;  // slot pairs, -1 when a group did not participate
    };
    std::optional<Match> match() const;
    void reset();

  private:
    struct Thread {
        uint32_t pc;
        std::vector<int64_t> caps;
    };
    void add_thread(std::vector<Thread>& list, std::vector<uint32_t>& seen, uint32_t pc,
                    std::vector<int64_t> caps, int64_t pos, bool at_end) const;
    void step(uint32_t cp, int64_t pos, int64_t next_pos);

    std::shared_ptr<const RegexProgram> prog_;
    std::vector<Thread> threads_;  // priority order; pcs are Char, Match or End instructions
    std::optional<Match> best_;    // best match that ended before the current position
    int64_t pos_ = 0;              // byte offset of the next code point
    Utf8Partial pending_;
    int64_t pending_start_ = 0;
};

}  // namespace engine::gbnf
