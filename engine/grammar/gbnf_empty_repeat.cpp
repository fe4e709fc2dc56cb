// x* and x+ whose item x can match "" (`("a"?)*`, `(comment | ws)*` with `ws ::= [ \t]*`) would let
// the matcher's stack expansion loop forever. llama.cpp accepts such grammars, and hand-written ones
// contain them, so they are rewritten to the same language without the loop: (x minus "")*.
#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_error.h"

namespace engine::gbnf {

namespace {

bool is_terminal(const Elem& e) {
    return e.op == Op::Chars || e.op == Op::Token || e.op == Op::TokenNot;
}

// Which rules can match some non-empty text.
std::vector<bool> growing_rules(const Rules& g) {
    std::vector<bool> grows(g.rules.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t r = 0; r < g.rules.size(); ++r) {
            if (grows[r]) continue;
            for (uint32_t a : g.rules[r].alts) {
                for (uint32_t p = a; g.elems[p].op != Op::End; ++p) {
                    const Elem& e = g.elems[p];
                    if (is_terminal(e) || (e.op == Op::Rule && grows[e.arg])) grows[r] = changed = true;
                }
            }
        }
    }
    return grows;
}

class EmptyRemover {
  public:
    EmptyRemover(Rules& g, std::string_view text)
        : g_(g), text_(text), nullable_(nullable_rules(g)), grows_(growing_rules(g)) {}

    void run() {
        const auto n_rules = uint32_t(g_.rules.size());  // rules added below are never repetitions
        for (uint32_t r = 0; r < n_rules; ++r) {
            if (g_.rules[r].origin != Rule::Origin::Repeat || g_.rules[r].alts.size() != 2) continue;
            // An unbounded repetition: R ::= item R | ""
            const uint32_t a = g_.rules[r].alts[0];
            const uint32_t item_end = a + g_.rules[r].repeated_item;
            const Elem& last = g_.elems[item_end];
            if (last.op != Op::Rule || last.arg != r || g_.elems[item_end + 1].op != Op::End) continue;
            bool item_nullable = true;
            for (uint32_t p = a; p < item_end; ++p)
                item_nullable = item_nullable && g_.elems[p].op == Op::Rule && nullable_[g_.elems[p].arg];
            if (!item_nullable) continue;
            current_ = r;
            auto alts = nonempty_alternatives(a, item_end);
            if (alts.empty()) {  // the item matches only "": so does the repetition
                g_.rules[r].alts.erase(g_.rules[r].alts.begin());
                continue;
            }
            const uint32_t ne = new_rule(r, std::move(alts));
            g_.rules[r].alts[0] = append_alt({{Op::Rule, ne}, {Op::Rule, r}});
            fill_pending();
        }
    }

  private:
    // The alternatives of the sequence elems[from, to) that match non-empty text: for each position i
    // whose predecessors can all be empty, (element i minus "") followed by the rest as written.
    std::vector<std::vector<Elem>> nonempty_alternatives(uint32_t from, uint32_t to) {
        std::vector<std::vector<Elem>> alts;
        for (uint32_t i = from; i < to; ++i) {
            const Elem e = g_.elems[i];
            const bool can_grow = is_terminal(e) || (e.op == Op::Rule && grows_[e.arg]);
            if (can_grow) {
                charge(to - i + 1);
                std::vector<Elem> alt{is_terminal(e) ? e : Elem{Op::Rule, nonempty_rule(e.arg)}};
                alt.insert(alt.end(), g_.elems.begin() + i + 1, g_.elems.begin() + to);
                alts.push_back(std::move(alt));
            }
            if (!(e.op == Op::Rule && nullable_[e.arg])) break;
        }
        return alts;
    }

    // Rule `r` minus "": `r` itself when it cannot match "". A new rule's alternatives are filled in by
    // fill_pending (a work list rather than recursion: chains of rules may be long).
    uint32_t nonempty_rule(uint32_t r) {
        if (!nullable_[r]) return r;
        if (auto it = memo_.find(r); it != memo_.end()) return it->second;
        const uint32_t id = new_rule(r, {});
        memo_.emplace(r, id);
        pending_.push_back({r, id});
        return id;
    }

    void fill_pending() {
        while (!pending_.empty()) {
            const auto [r, id] = pending_.back();
            pending_.pop_back();
            std::vector<std::vector<Elem>> alts;
            const std::vector<uint32_t> starts = g_.rules[r].alts;  // copied: new rules grow g_.rules
            for (uint32_t a : starts) {
                uint32_t end = a;
                while (g_.elems[end].op != Op::End) ++end;
                for (auto& alt : nonempty_alternatives(a, end)) alts.push_back(std::move(alt));
            }
            for (auto& alt : alts) g_.rules[id].alts.push_back(append_alt(alt));
        }
    }

    uint32_t new_rule(uint32_t like, std::vector<std::vector<Elem>> alts) {
        Rule rule;
        rule.origin = Rule::Origin::Group;
        rule.owner = g_.rules[like].owner;
        rule.offset = g_.rules[like].offset;
        rule.name = g_.rules[rule.owner].name + "_" + std::to_string(g_.rules.size());
        const auto id = uint32_t(g_.rules.size());
        g_.rules.push_back(std::move(rule));
        nullable_.push_back(false);
        grows_.push_back(true);
        for (auto& alt : alts) g_.rules[id].alts.push_back(append_alt(alt));
        return id;
    }

    // Counts n elements against the bound (before they are built).
    void charge(size_t n) {
        added_ += n;
        if (added_ <= kMaxElements) return;
        int line, column;
        line_column(text_, g_.rules[current_].offset, line, column);
        throw GrammarError(line, column, "this repetition makes the grammar too large");
    }

    uint32_t append_alt(const std::vector<Elem>& alt) {
        const auto start = uint32_t(g_.elems.size());
        g_.elems.insert(g_.elems.end(), alt.begin(), alt.end());
        g_.elems.push_back({Op::End, 0});
        return start;
    }

    Rules& g_;
    std::string_view text_;
    uint32_t current_ = 0;  // the repetition being rewritten (for the error position)
    size_t added_ = 0;      // elements added so far (a sequence of n optional items adds ~n^2/2)
    std::vector<bool> nullable_, grows_;
    std::unordered_map<uint32_t, uint32_t> memo_;
    std::vector<std::pair<uint32_t, uint32_t>> pending_;  // (rule, its rule minus "") to fill in
};

}  // namespace

void remove_empty_repeat_items(Rules& rules, std::string_view text) {
    EmptyRemover(rules, text).run();
}

}  // namespace engine::gbnf
