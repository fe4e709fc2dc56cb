// The expansion bound (see check_expansion in gbnf_parser.h): how many distinct matcher stacks a
// grammar can hold. A stack is a path of rule references from the root to one terminal element, so
// the count is the number of such paths, summed bottom-up over the reference graph (recursive
// references, which the matcher keeps flat, count once). Nested bounded repetitions multiply:
// ("a"{0,100}){0,100} has 100 x 100 paths.
#include <algorithm>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_error.h"

namespace engine::gbnf {

void check_expansion(const Rules& g, uint32_t root, std::string_view text, uint64_t limit) {
    constexpr uint64_t kUnknown = UINT64_MAX;
    std::vector<uint64_t> paths(g.rules.size(), kUnknown);
    std::vector<uint8_t> open(g.rules.size(), 0);  // on the DFS stack: a recursive reference
    struct Frame {
        uint32_t rule;
        size_t alt = 0;   // index into rules[rule].alts
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
            if (f.sum > limit) {
                int line, column;
                line_column(text, rule.offset, line, column);
                throw GrammarError(line, column,
                                   "the grammar expands to more than " + std::to_string(limit) +
                                       " matcher stacks (nested repetitions multiply; in rule '" +
                                       g.rules[rule.owner].name + "')");
            }
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
}

}  // namespace engine::gbnf
