// The matcher core: sets of GBNF parse stacks, interned and advanced lazily, with every
// transition cached, so a state seen before costs a table lookup.
//
// A stack is a chain of nodes (position in Rules::elems, parent node); node 0 is the empty stack,
// i.e. the grammar is complete. Stacks are interned, so equal stacks are equal ids and sets of
// them dedupe for free. A set of stack ids is interned too (set 0 = no stacks = dead). Each set
// splits the code points into intervals on which its stack tops agree, so a set has only a few
// distinct transitions, each computed once; a 128-entry table short-cuts ASCII bytes.
//
// Not thread-safe: callers serialize access (Grammar holds a mutex).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/grammar/gbnf_rules.h"
#include "engine/grammar/utf8.h"

namespace engine::gbnf {

// Where a match stands: an interned stack set and a pending partial UTF-8 sequence (packed).
struct MatchState {
    uint32_t set = 0;
    uint32_t partial = 0;

    bool dead() const { return set == 0; }
    uint64_t key() const { return (uint64_t(set) << 32) | partial; }
    bool operator==(const MatchState&) const = default;
};

// Work (stack entries copied, sorted and interned) one call of the matcher may do, and the most
// stack entries the caches may hold; beyond either, GrammarBudgetError. Cached transitions cost
// nothing, so only grammars whose stack sets explode (deeply nested ambiguous repetitions) reach them.
// A new stack node (hashed, its closure computed) costs kNodeCost units, an entry copied into a set or a
// closure one. Calibrated so that a call that spends the whole budget takes ~0.1 s on one core.
constexpr uint64_t kDefaultStepBudget = uint64_t(1) << 22;
constexpr uint64_t kNodeCost = 16;
constexpr size_t kMaxCachedEntries = size_t(32) << 20;

class StackAutomaton {
  public:
    // Computing the start set counts against `budget` too.
    StackAutomaton(std::shared_ptr<const Rules> rules, uint32_t root, uint64_t budget = kDefaultStepBudget);

    // Gives the next steps (until the next call) `units` of work; Grammar calls it once per
    // apply/allows/accept, so the budget bounds the matcher's time per sampled token.
    void set_budget(uint64_t units) { budget_left_ = units; }

    const Rules& rules() const { return *rules_; }
    MatchState start() const { return {start_set_, 0}; }

    // Advances by one byte of generated text; a dead state when no stack can take it.
    MatchState step(MatchState s, uint8_t byte) {
        if (s.partial == 0 && byte < 128) {
            int32_t& slot = ascii_slot(s.set, byte);
            if (slot < 0) slot = int32_t(step_cp(s.set, byte));
            return {uint32_t(slot), 0};
        }
        return step_slow(s, byte);
    }
    MatchState step_bytes(MatchState s, std::string_view bytes) {
        for (char c : bytes) {
            s = step(s, uint8_t(c));
            if (s.dead()) break;
        }
        return s;
    }
    // Advances stacks whose top is a token element (<[id]>, !<[id]>) by a whole token.
    uint32_t step_token(uint32_t set, int32_t token);
    // Union of two sets (used when a token advances both char and token stacks).
    uint32_t merge(uint32_t a, uint32_t b);

    // Complete = some stack is empty and no UTF-8 sequence is pending: end of generation is allowed.
    bool complete(MatchState s) const { return s.partial == 0 && s.set != 0 && set_nodes(s.set)[0] == 0; }
    bool has_token_tops(uint32_t set) const { return sets_[set].token_tops; }
    // Distinct character sets (indices into rules().sets) at the stack tops of a set.
    std::vector<uint32_t> top_char_sets(uint32_t set) const;

    size_t n_sets() const { return sets_.size(); }
    size_t n_nodes() const { return nodes_.size(); }
    size_t memory_bytes() const;

  private:
    struct Node {
        uint32_t pos;
        uint32_t parent;
    };
    struct SetInfo {
        uint32_t off, len;   // into set_pool_
        int32_t ascii = -1;  // table index into ascii_, or -1
        int32_t table = -1;  // index into tables_, or -1
        bool token_tops = false;
    };
    // Code points split into intervals [bounds[i], bounds[i+1]) on which every stack top of a set
    // agrees; `live` marks intervals some top accepts, `next` caches the resulting set (-1: not yet).
    struct CharTable {
        std::vector<uint32_t> bounds;
        std::vector<uint8_t> live;
        std::vector<int32_t> next;
    };
    struct Span {
        uint32_t off = UINT32_MAX, len = 0;
    };

    const uint32_t* set_nodes(uint32_t set) const { return set_pool_.data() + sets_[set].off; }
    int32_t& ascii_slot(uint32_t set, uint8_t byte) {
        SetInfo& info = sets_[set];
        if (info.ascii < 0) {
            info.ascii = int32_t(ascii_.size() / 128);
            ascii_.resize(ascii_.size() + 128, -1);
        }
        return ascii_[size_t(info.ascii) * 128 + byte];
    }

    MatchState step_slow(MatchState s, uint8_t byte);
    uint32_t step_cp(uint32_t set, uint32_t cp);
    CharTable& table(uint32_t set);
    uint32_t advance(uint32_t set, uint32_t cp);
    bool viable(uint32_t set, Utf8Partial p);
    uint32_t node(uint32_t pos, uint32_t parent);
    Span closure(uint32_t node);
    void append_closure(uint32_t node, std::vector<uint32_t>& out);
    uint32_t successor(const Node& n);                  // the stack after n's top element matched
    uint32_t intern_set(std::vector<uint32_t>& nodes);  // sorts and dedupes nodes
    void charge(size_t units);                          // throws GrammarBudgetError when spent

    std::shared_ptr<const Rules> rules_;
    std::vector<Node> nodes_;
    std::unordered_map<uint64_t, uint32_t> node_index_;
    std::vector<Span> closures_;
    std::vector<uint32_t> closure_pool_;
    std::vector<SetInfo> sets_;
    std::vector<uint32_t> set_pool_;
    std::unordered_map<std::string, uint32_t> set_index_;
    std::vector<int32_t> ascii_;
    std::vector<CharTable> tables_;
    std::unordered_map<uint64_t, uint32_t> token_next_;  // (set, token) -> set
    std::unordered_map<uint64_t, uint32_t> merged_;      // (set, set) -> set
    uint32_t start_set_ = 0;
    uint64_t budget_left_ = kDefaultStepBudget;
};

}  // namespace engine::gbnf
