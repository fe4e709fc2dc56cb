#include "engine/grammar/stack_automaton.h"

#include <algorithm>
#include <string>

#include "engine/grammar/grammar_error.h"

namespace engine::gbnf {

StackAutomaton::StackAutomaton(std::shared_ptr<const Rules> rules, uint32_t root, uint64_t budget)
    : rules_(std::move(rules)), budget_left_(budget) {
    nodes_.push_back({UINT32_MAX, UINT32_MAX});  // node 0: the empty stack
    closures_.emplace_back();
    sets_.push_back({0, 0});  // set 0: dead
    std::vector<uint32_t> start;
    for (uint32_t alt : rules_->rules[root].alts) {
        append_closure(rules_->elems[alt].op == Op::End ? 0 : node(alt, 0), start);
    }
    start_set_ = intern_set(start);
}

void StackAutomaton::charge(size_t units) {
    if (units > budget_left_) {
        throw GrammarBudgetError("the grammar is too costly to match: one token needed more than " +
                                 std::to_string(kDefaultStepBudget) +
                                 " units of matcher work (nested repetitions make too many stacks)");
    }
    budget_left_ -= units;
    if (closure_pool_.size() + set_pool_.size() + nodes_.size() > kMaxCachedEntries) {
        throw GrammarBudgetError("the grammar is too costly to match: its matcher outgrew " +
                                 std::to_string(kMaxCachedEntries) + " cached stack entries");
    }
}

uint32_t StackAutomaton::node(uint32_t pos, uint32_t parent) {
    const uint64_t key = (uint64_t(pos) << 32) | parent;
    if (auto found = node_index_.find(key); found != node_index_.end()) return found->second;
    charge(kNodeCost);  // before anything changes: a throw leaves the automaton consistent for clones
    auto [it, inserted] = node_index_.emplace(key, uint32_t(nodes_.size()));
    if (inserted) {
        nodes_.push_back({pos, parent});
        closures_.emplace_back();
    }
    return it->second;
}

// The stack once n's top element has matched: the next element of the same alternative, or (at
// the end of the alternative) the parent. Tail positions are never pushed, so right recursion
// (x* as R ::= x R | "") keeps stacks flat.
uint32_t StackAutomaton::successor(const Node& n) {
    const uint32_t next = n.pos + 1;
    return rules_->elems[next].op == Op::End ? n.parent : node(next, n.parent);
}

void StackAutomaton::append_closure(uint32_t n, std::vector<uint32_t>& out) {
    const Span s = closure(n);
    out.insert(out.end(), closure_pool_.begin() + s.off, closure_pool_.begin() + s.off + s.len);
}

// Expands rule references at the top until every stack's top is a terminal (or the stack is
// empty). Iterative post-order with memoization per node; the left-recursion check guarantees the
// expansion is finite.
StackAutomaton::Span StackAutomaton::closure(uint32_t n) {
    struct Frame {
        uint32_t node, base, rule, next_alt;
        std::vector<uint32_t> acc;
    };
    std::vector<Frame> frames;
    auto store = [&](uint32_t nd, std::vector<uint32_t>& v) {
        charge(v.size() + 1);
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        closures_[nd] = {uint32_t(closure_pool_.size()), uint32_t(v.size())};
        closure_pool_.insert(closure_pool_.end(), v.begin(), v.end());
    };
    // Returns true when nd's closure is known (memoized or terminal); otherwise pushes a frame.
    auto enter = [&](uint32_t nd) {
        if (closures_[nd].off != UINT32_MAX) return true;
        const Elem e = nd == 0 ? Elem{Op::End, 0} : rules_->elems[nodes_[nd].pos];
        if (e.op != Op::Rule) {
            std::vector<uint32_t> self{nd};
            store(nd, self);
            return true;
        }
        const Node copy = nodes_[nd];
        const uint32_t base = successor(copy);
        frames.push_back({nd, base, e.arg, 0, {}});
        return false;
    };
    if (enter(n)) return closures_[n];
    while (!frames.empty()) {
        Frame& f = frames.back();
        const auto& alts = rules_->rules[f.rule].alts;
        if (f.next_alt == alts.size()) {
            const uint32_t done = f.node;
            store(done, f.acc);
            frames.pop_back();
            if (!frames.empty()) {
                const Span s = closures_[done];
                frames.back().acc.insert(frames.back().acc.end(), closure_pool_.begin() + s.off,
                                         closure_pool_.begin() + s.off + s.len);
            }
            continue;
        }
        const uint32_t alt = alts[f.next_alt++];
        const uint32_t base = f.base;
        const uint32_t child = rules_->elems[alt].op == Op::End ? base : node(alt, base);
        if (enter(child)) {
            const Span s = closures_[child];
            auto& acc = frames.back().acc;
            acc.insert(acc.end(), closure_pool_.begin() + s.off, closure_pool_.begin() + s.off + s.len);
        }
    }
    return closures_[n];
}

uint32_t StackAutomaton::intern_set(std::vector<uint32_t>& v) {
    charge(v.size() + 1);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    if (v.empty()) return 0;
    std::string key(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(uint32_t));
    auto [it, inserted] = set_index_.emplace(std::move(key), uint32_t(sets_.size()));
    if (inserted) {
        SetInfo info{uint32_t(set_pool_.size()), uint32_t(v.size())};
        for (uint32_t nd : v) {
            if (nd != 0) {
                const Op op = rules_->elems[nodes_[nd].pos].op;
                if (op == Op::Token || op == Op::TokenNot) info.token_tops = true;
            }
        }
        set_pool_.insert(set_pool_.end(), v.begin(), v.end());
        sets_.push_back(info);
    }
    return it->second;
}

uint32_t StackAutomaton::advance(uint32_t set, uint32_t cp) {
    std::vector<uint32_t> next;
    const SetInfo info = sets_[set];
    charge(info.len);
    for (uint32_t i = 0; i < info.len; ++i) {
        const uint32_t nd = set_pool_[info.off + i];
        if (nd == 0) continue;
        const Node n = nodes_[nd];
        const Elem e = rules_->elems[n.pos];
        if (e.op != Op::Chars || !rules_->sets[e.arg].contains(cp)) continue;
        append_closure(successor(n), next);
    }
    return intern_set(next);
}

StackAutomaton::CharTable& StackAutomaton::table(uint32_t set) {
    if (sets_[set].table >= 0) return tables_[size_t(sets_[set].table)];
    std::vector<const CharSet*> tops;
    for (uint32_t id : top_char_sets(set)) tops.push_back(&rules_->sets[id]);
    CharTable t;
    t.bounds.push_back(0);
    for (const CharSet* cs : tops) {
        for (CharRange r : cs->ranges()) {
            t.bounds.push_back(r.lo);
            if (r.hi < kMaxCodePoint) t.bounds.push_back(r.hi + 1);
        }
    }
    std::sort(t.bounds.begin(), t.bounds.end());
    t.bounds.erase(std::unique(t.bounds.begin(), t.bounds.end()), t.bounds.end());
    for (uint32_t b : t.bounds) {
        bool live = false;
        for (const CharSet* cs : tops) live = live || cs->contains(b);
        t.live.push_back(live);
        t.next.push_back(live ? -1 : 0);
    }
    sets_[set].table = int32_t(tables_.size());
    tables_.push_back(std::move(t));
    return tables_.back();
}

uint32_t StackAutomaton::step_cp(uint32_t set, uint32_t cp) {
    CharTable& t = table(set);
    const size_t i = size_t(std::upper_bound(t.bounds.begin(), t.bounds.end(), cp) - t.bounds.begin()) - 1;
    if (t.next[i] < 0) {
        const uint32_t next = advance(set, cp);
        tables_[size_t(sets_[set].table)].next[i] = int32_t(next);  // advance() may grow tables_
        return next;
    }
    return uint32_t(t.next[i]);
}

bool StackAutomaton::viable(uint32_t set, Utf8Partial p) {
    uint32_t lo, hi;
    p.completions(lo, hi);
    const CharTable& t = table(set);
    size_t i = size_t(std::upper_bound(t.bounds.begin(), t.bounds.end(), lo) - t.bounds.begin()) - 1;
    for (; i < t.bounds.size() && t.bounds[i] <= hi; ++i) {
        if (t.live[i]) return true;
    }
    return false;
}

MatchState StackAutomaton::step_slow(MatchState s, uint8_t byte) {
    if (s.dead()) return {};
    Utf8Partial p = Utf8Partial::unpack(s.partial);
    uint32_t cp = 0;
    switch (utf8_feed(p, byte, cp)) {
        case Utf8Step::Complete:
            return {step_cp(s.set, cp), 0};
        case Utf8Step::Partial:
            if (viable(s.set, p)) return {s.set, p.pack()};
            return {};
        case Utf8Step::Invalid:
            return {};
    }
    return {};
}

uint32_t StackAutomaton::step_token(uint32_t set, int32_t token) {
    if (!sets_[set].token_tops) return 0;
    const uint64_t key = (uint64_t(set) << 32) | uint32_t(token);
    auto it = token_next_.find(key);
    if (it != token_next_.end()) return it->second;
    std::vector<uint32_t> next;
    const SetInfo info = sets_[set];
    for (uint32_t i = 0; i < info.len; ++i) {
        const uint32_t nd = set_pool_[info.off + i];
        if (nd == 0) continue;
        const Node n = nodes_[nd];
        const Elem e = rules_->elems[n.pos];
        const bool match = (e.op == Op::Token && e.arg == uint32_t(token)) ||
                           (e.op == Op::TokenNot && e.arg != uint32_t(token));
        if (match) append_closure(successor(n), next);
    }
    const uint32_t result = intern_set(next);
    token_next_.emplace(key, result);
    return result;
}

uint32_t StackAutomaton::merge(uint32_t a, uint32_t b) {
    if (a == 0 || a == b) return b;
    if (b == 0) return a;
    if (a > b) std::swap(a, b);
    const uint64_t key = (uint64_t(a) << 32) | b;
    auto it = merged_.find(key);
    if (it != merged_.end()) return it->second;
    std::vector<uint32_t> v(set_nodes(a), set_nodes(a) + sets_[a].len);
    v.insert(v.end(), set_nodes(b), set_nodes(b) + sets_[b].len);
    const uint32_t result = intern_set(v);
    merged_.emplace(key, result);
    return result;
}

std::vector<uint32_t> StackAutomaton::top_char_sets(uint32_t set) const {
    std::vector<uint32_t> out;
    const SetInfo info = sets_[set];
    for (uint32_t i = 0; i < info.len; ++i) {
        const uint32_t nd = set_pool_[info.off + i];
        if (nd == 0) continue;
        const Elem e = rules_->elems[nodes_[nd].pos];
        if (e.op == Op::Chars) out.push_back(e.arg);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

size_t StackAutomaton::memory_bytes() const {
    // Rough: containers' payloads plus a per-entry estimate for the hash maps.
    return nodes_.capacity() * sizeof(Node) + closures_.capacity() * sizeof(Span) +
           closure_pool_.capacity() * 4 + sets_.capacity() * sizeof(SetInfo) + set_pool_.capacity() * 4 +
           ascii_.capacity() * 4 + tables_.size() * sizeof(CharTable) +
           (node_index_.size() + token_next_.size() + merged_.size()) * 32 + set_index_.size() * 64;
}

}  // namespace engine::gbnf
