// The expansion bound (see check_expansion in gbnf_parser.h): how many distinct matcher stacks a
// grammar can hold. Two counts, the cheap one first:
//  - paths: the number of paths of rule references from the root to a terminal element, summed
//    bottom-up over the reference graph (recursive references count once). Nested bounded
//    repetitions multiply: ("a"{0,100}){0,100} has 100 x 100 paths.
//  - distinct stacks: the matcher never pushes a reference in tail position (the last element of an
//    alternative), so paths that differ only in tail references are one stack. A rule's stacks are
//    the union, over the rules it reaches through tail references alone, of their own stacks: their
//    terminals, and for each reference followed by more elements that position under the referenced
//    rule's stacks. JSON objects of optional properties chain their rest-i rules by tail references:
//    their paths grow with the square of the property count, their stacks linearly.
// The second count is run only when the first exceeds the limit, and gives up (keeping the first's
// verdict) past a fixed amount of work, since its tail closures can overlap.
#include <algorithm>
#include <optional>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_error.h"

namespace engine::gbnf {

namespace {

constexpr uint64_t kUnknown = UINT64_MAX;
// Closure members and references visited by the distinct-stack count before it gives up.
constexpr uint64_t kStackCountWork = uint64_t(1) << 23;

struct Verdict {
    uint64_t count;
    uint32_t rule;  // the first rule whose count exceeded the limit
};

Verdict count_paths(const Rules& g, uint32_t root, uint64_t limit) {
    std::vector<uint64_t> paths(g.rules.size(), kUnknown);
    std::vector<uint8_t> open(g.rules.size(), 0);  // on the DFS stack: a recursive reference
    struct Frame {
        uint32_t rule;
        size_t alt = 0;    // index into rules[rule].alts
        uint32_t pos = 0;  // element within the current alternative (absolute index into elems)
        uint64_t sum = 0;
    };
    std::vector<Frame> stack;
    auto enter = [&](uint32_t r) {
        open[r] = 1;
        Frame f{r};
        if (!g.rules[r].alts.empty()) f.pos = g.rules[r].alts[0];
        stack.push_back(f);
    };
    auto add = [&](uint64_t& sum, uint64_t n) { sum = std::min(limit + 1, sum + n); };
    enter(root);
    while (!stack.empty()) {
        Frame& f = stack.back();
        const Rule& rule = g.rules[f.rule];
        if (f.alt == rule.alts.size()) {
            paths[f.rule] = f.sum;
            open[f.rule] = 0;
            if (f.sum > limit) return {f.sum, f.rule};
            const uint64_t done = f.sum;
            stack.pop_back();
            if (!stack.empty()) add(stack.back().sum, done);
            continue;
        }
        const Elem e = g.elems[f.pos];
        if (e.op == Op::End) {
            if (++f.alt < rule.alts.size()) f.pos = rule.alts[f.alt];
            continue;
        }
        ++f.pos;
        if (e.op != Op::Rule) {
            add(f.sum, 1);
        } else if (paths[e.arg] != kUnknown) {
            add(f.sum, paths[e.arg]);
        } else if (open[e.arg]) {
            add(f.sum, 1);
        } else {
            enter(e.arg);  // invalidates f; the loop re-reads the top
        }
    }
    return {paths[root], root};
}

// A rule's elements as the stack count sees them.
struct RuleShape {
    uint32_t terminals = 0;
    std::vector<uint32_t> inner;  // referenced rules, one entry per reference followed by more elements
    std::vector<uint32_t> tail;   // rules referenced in tail position
};

std::optional<Verdict> count_distinct_stacks(const Rules& g, uint32_t root, uint64_t limit) {
    const size_t n = g.rules.size();
    std::vector<RuleShape> shape(n);
    for (size_t r = 0; r < n; ++r) {
        for (uint32_t p : g.rules[r].alts) {
            for (; g.elems[p].op != Op::End; ++p) {
                const Elem e = g.elems[p];
                if (e.op != Op::Rule) {
                    ++shape[r].terminals;
                } else {
                    (g.elems[p + 1].op == Op::End ? shape[r].tail : shape[r].inner).push_back(e.arg);
                }
            }
        }
    }
    std::vector<uint64_t> stacks(n, kUnknown), own(n, kUnknown);
    std::vector<uint8_t> open(n, 0), own_open(n, 0);  // counts in progress: recursive references
    std::vector<uint32_t> seen(n, 0);
    uint32_t epoch = 0;
    uint64_t work = 0;
    struct Frame {
        uint32_t rule;
        std::vector<uint32_t> members;  // the rules `rule` reaches through tail references, itself first
        size_t member = 0, ref = 0;
        bool in_member = false;
        uint64_t sum = 0, acc = 0;
    };
    std::vector<Frame> stack;
    auto add = [&](uint64_t& sum, uint64_t k) { sum = std::min(limit + 1, sum + k); };
    auto enter = [&](uint32_t r) {
        open[r] = 1;
        Frame f;
        f.rule = r;
        seen[r] = ++epoch;
        f.members.push_back(r);
        for (size_t i = 0; i < f.members.size(); ++i) {
            const auto& tail = shape[f.members[i]].tail;
            work += 1 + tail.size();
            for (uint32_t t : tail) {
                if (seen[t] != epoch) {
                    seen[t] = epoch;
                    f.members.push_back(t);
                }
            }
        }
        stack.push_back(std::move(f));
    };
    enter(root);
    while (!stack.empty()) {
        if (work > kStackCountWork) return std::nullopt;
        Frame& f = stack.back();
        if (f.member == f.members.size()) {
            stacks[f.rule] = f.sum;
            open[f.rule] = 0;
            if (f.sum > limit) return Verdict{f.sum, f.rule};
            stack.pop_back();  // the parent resumes at the same reference and finds the count
            continue;
        }
        const uint32_t q = f.members[f.member];
        if (!f.in_member) {
            if (own[q] != kUnknown || own_open[q]) {
                add(f.sum, own[q] != kUnknown ? own[q] : 1);
                ++f.member;
                continue;
            }
            own_open[q] = 1;
            f.in_member = true;
            f.ref = 0;
            f.acc = shape[q].terminals;
        }
        const auto& inner = shape[q].inner;
        bool descended = false;
        for (; f.ref < inner.size(); ++f.ref) {
            ++work;
            const uint32_t t = inner[f.ref];
            if (stacks[t] != kUnknown) {
                add(f.acc, stacks[t]);
            } else if (open[t]) {
                add(f.acc, 1);
            } else {
                enter(t);  // invalidates f; the loop re-reads the top
                descended = true;
                break;
            }
        }
        if (descended) continue;
        own[q] = f.acc;
        own_open[q] = 0;
        add(f.sum, f.acc);
        f.in_member = false;
        ++f.member;
    }
    return Verdict{stacks[root], root};
}

}  // namespace

void check_expansion(const Rules& g, uint32_t root, std::string_view text, uint64_t limit) {
    Verdict v = count_paths(g, root, limit);
    if (v.count <= limit) return;
    if (const auto stacks = count_distinct_stacks(g, root, limit)) {
        if (stacks->count <= limit) return;
        v = *stacks;
    }
    const Rule& rule = g.rules[v.rule];
    int line, column;
    line_column(text, rule.offset, line, column);
    throw GrammarError(line, column,
                       "the grammar expands to more than " + std::to_string(limit) +
                           " matcher stacks (nested repetitions multiply; in rule '" + g.rules[rule.owner].name +
                           "')");
}

}  // namespace engine::gbnf
