// Left-recursion detection: a rule that can reach itself without consuming input would make the
// matcher's stack expansion loop forever, so such grammars are rejected at parse time.
#include <algorithm>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_error.h"

namespace engine::gbnf {

namespace {

// Rules reachable from r at a position preceded only by nullable elements.
std::vector<std::vector<uint32_t>> left_edges(const Rules& g, const std::vector<bool>& nullable) {
    std::vector<std::vector<uint32_t>> edges(g.rules.size());
    for (uint32_t r = 0; r < g.rules.size(); ++r) {
        for (uint32_t a : g.rules[r].alts) {
            for (uint32_t p = a; g.elems[p].op == Op::Rule; ++p) {
                edges[r].push_back(g.elems[p].arg);
                if (!nullable[g.elems[p].arg]) break;
            }
        }
    }
    return edges;
}

// A cycle in the left-edge graph (as a list of rules, first == last), or empty.
std::vector<uint32_t> find_cycle(const std::vector<std::vector<uint32_t>>& edges) {
    enum Color : uint8_t { White, Grey, Black };
    std::vector<Color> color(edges.size(), White);
    std::vector<std::pair<uint32_t, size_t>> stack;  // (rule, next edge index)
    for (uint32_t start = 0; start < edges.size(); ++start) {
        if (color[start] != White) continue;
        stack.push_back({start, 0});
        color[start] = Grey;
        while (!stack.empty()) {
            auto& [r, next] = stack.back();
            if (next == edges[r].size()) {
                color[r] = Black;
                stack.pop_back();
                continue;
            }
            const uint32_t to = edges[r][next++];
            if (color[to] == Grey) {
                std::vector<uint32_t> cycle;
                size_t i = stack.size();
                while (stack[i - 1].first != to) --i;
                for (size_t j = i - 1; j < stack.size(); ++j) cycle.push_back(stack[j].first);
                cycle.push_back(to);
                return cycle;
            }
            if (color[to] == White) {
                color[to] = Grey;
                stack.push_back({to, 0});
            }
        }
    }
    return {};
}

[[noreturn]] void fail_at(std::string_view text, size_t offset, std::string msg) {
    int line, column;
    line_column(text, offset, line, column);
    throw GrammarError(line, column, std::move(msg));
}

}  // namespace

std::vector<bool> nullable_rules(const Rules& g) {
    std::vector<bool> nullable(g.rules.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t r = 0; r < g.rules.size(); ++r) {
            if (nullable[r]) continue;
            for (uint32_t a : g.rules[r].alts) {
                uint32_t p = a;
                while (g.elems[p].op == Op::Rule && nullable[g.elems[p].arg]) ++p;
                if (g.elems[p].op == Op::End) {
                    nullable[r] = changed = true;
                    break;
                }
            }
        }
    }
    return nullable;
}

void check_left_recursion(const Rules& g, std::string_view text) {
    const auto nullable = nullable_rules(g);
    const auto cycle = find_cycle(left_edges(g, nullable));
    if (cycle.empty()) return;

    // Name the cycle by user rules, starting from the one defined first in the text.
    std::vector<uint32_t> owners;
    for (size_t i = 0; i + 1 < cycle.size(); ++i) {
        const uint32_t o = g.rules[cycle[i]].owner;
        if (owners.empty() || owners.back() != o) owners.push_back(o);
    }
    if (owners.size() > 1 && owners.front() == owners.back()) owners.pop_back();
    auto first = std::min_element(owners.begin(), owners.end(), [&](uint32_t a, uint32_t b) {
        return g.rules[a].offset < g.rules[b].offset;
    });
    std::rotate(owners.begin(), first, owners.end());
    std::string path;
    for (uint32_t o : owners) path += g.rules[o].name + " -> ";
    path += g.rules[owners.front()].name;
    fail_at(text, g.rules[owners.front()].offset,
            "left recursion: rule '" + g.rules[owners.front()].name +
                "' can reach itself without consuming input (" + path + ")");
}

}  // namespace engine::gbnf
