// The raw-text mode of schema_pattern.h: a pattern intersected with "does not contain the closing
// tag". The tag is an automaton whose state is how much of the tag the text ends with; the grammar
// is the product of the pattern with it, built continuation by continuation: rule (k, q) matches
// "what is left of the pattern after point k, read from tag state q". Where the tag cannot matter
// (state 0, no '<' in a sub-pattern) the sub-pattern is written as one GBNF expression, exactly as
// the JSON mode writes it, only with raw characters.
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "engine/grammar/regex_gbnf.h"
#include "engine/grammar/schema_pattern.h"

namespace engine::gbnf {

namespace {

using Kind = RegexNode::Kind;

// Alternatives across all rules: a bound on the work of patterns with wide alternations.
constexpr size_t kMaxRawPatternAlternatives = 8 * kMaxRawPatternRules;

// The closing tag as an automaton. State q (0 .. size-1): the text ends with the tag's first q
// characters. Reading tag[q] advances (reaching size means the text contains the tag), '<' restarts
// at 1 (the tag's only '<' is its first character), anything else falls back to 0.
class TagAutomaton {
  public:
    explicit TagAutomaton(std::string_view tag) : tag_(tag) {
        if (tag_.empty() || tag_[0] != '<' || tag_.find('<', 1) != std::string::npos)
            throw std::invalid_argument("a closing tag must start with '<' and contain no other '<'");
        for (char c : tag_)
            if (static_cast<unsigned char>(c) >= 0x80) throw std::invalid_argument("a closing tag must be ASCII");
    }
    int states() const { return static_cast<int>(tag_.size()); }
    const std::string& text() const { return tag_; }

    // The parts of `set` read from state q with the state each leads to; parts that would complete
    // the tag are left out.
    std::vector<std::pair<CharSet, int>> split(const CharSet& set, int q) const {
        const uint32_t advance = static_cast<unsigned char>(tag_[q]);
        std::vector<std::pair<CharSet, int>> out;
        std::vector<CharRange> rest;
        for (CharRange r : set.ranges()) {  // the set without '<' and without tag[q]
            uint32_t lo = r.lo;
            for (uint32_t cut : std::set<uint32_t>{'<', advance}) {
                if (cut < lo || cut > r.hi) continue;
                if (cut > lo) rest.push_back({lo, cut - 1});
                lo = cut + 1;
            }
            if (lo <= r.hi) rest.push_back({lo, r.hi});
        }
        if (!rest.empty()) out.emplace_back(CharSet(rest), 0);
        if (set.contains(advance) && q + 1 < states()) out.emplace_back(CharSet::single(advance), q + 1);
        if (advance != '<' && set.contains('<')) out.emplace_back(CharSet::single('<'), 1);
        return out;
    }

  private:
    std::string tag_;
};

// A GBNF sequence: text (may be empty), then a rule (-1: none, the end of the value).
struct Seq {
    std::string text;
    int ref = -1;
};
using Alts = std::vector<Seq>;

// What follows a point in the pattern, whatever the tag state there.
struct Cont {
    enum class Kind { Accept, Then, Repeat } kind = Kind::Accept;
    const RegexNode* node = nullptr;  // Then: the node to match next; Repeat: the body (not nullable)
    int next = -1;                    // what follows the node (Then) or the last copy (Repeat)
    uint32_t need = 0, more = 0;      // Repeat: copies still required, optional ones left
    std::vector<int> rules;           // per tag state: the rule, -1 until made
};

class RawPattern {
  public:
    RawPattern(const TagAutomaton& tag) : tag_(tag) { accept_ = cont(Cont::Kind::Accept, nullptr, -1); }

    std::string run(const Regex& re, const std::string& name) {
        any_.kind = Kind::Chars;
        any_.chars = CharSet::any();
        Alts top;
        for (const TopAlternative& t : top_alternatives(re)) {
            int k = t.end ? accept_ : repeat(&any_, 0, kRegexUnbounded, accept_);
            if (!t.parts.empty()) {
                RegexNode& seq = owned_.emplace_back(Kind::Concat);
                for (const RegexNode* p : t.parts) seq.kids.push_back(*p);
                k = cont(Cont::Kind::Then, &seq, k);
            }
            if (!t.begin) k = repeat(&any_, 0, kRegexUnbounded, k);
            if (k == accept_) {
                top.push_back({"", -1});
            } else {
                for (Seq& seq : body(k, 0)) top.push_back(std::move(seq));
            }
        }
        while (!pending_.empty()) {
            const int r = pending_.front();
            pending_.pop_front();
            rules_[r] = body(origin_[r].first, origin_[r].second);
            alternatives_ += rules_[r].size();
            if (alternatives_ > kMaxRawPatternAlternatives) too_large();
        }
        return render(top, name);
    }

  private:
    [[noreturn]] static void too_large() {
        throw std::invalid_argument("pattern is too large to combine with the closing tag (more than " +
                                    std::to_string(kMaxRawPatternRules) + " rules)");
    }

    int cont(Cont::Kind kind, const RegexNode* node, int next, uint32_t need = 0, uint32_t more = 0) {
        const auto key = std::make_tuple(static_cast<int>(kind), node, next, need, more);
        if (auto it = cont_ids_.find(key); it != cont_ids_.end()) return it->second;
        Cont c{kind, node, next, need, more, std::vector<int>(tag_.states(), -1)};
        conts_.push_back(std::move(c));
        return cont_ids_[key] = static_cast<int>(conts_.size()) - 1;
    }

    // `need` more copies of `body`, then up to `more` optional ones (kRegexUnbounded: any number).
    int repeat(const RegexNode* body, uint32_t need, uint32_t more, int next) {
        if (need == 0 && more == 0) return next;
        return cont(Cont::Kind::Repeat, body, next, need, more);
    }

    // The rule for continuation k from state q (-1 for the end of the value); made on first use.
    int ref(int k, int q) {
        if (conts_[k].kind == Cont::Kind::Accept) return -1;
        int& r = conts_[k].rules[q];
        if (r < 0) {
            if (rules_.size() >= kMaxRawPatternRules) too_large();
            r = static_cast<int>(rules_.size());
            rules_.emplace_back();
            origin_.emplace_back(k, q);
            pending_.push_back(r);
        }
        return r;
    }

    Alts body(int k, int q) {
        const Cont c = conts_[k];  // a copy: cont() below may grow conts_
        if (c.kind == Cont::Kind::Then) return emit(*c.node, q, c.next);
        // Repeat
        if (c.need > 0) return emit(*c.node, q, repeat(c.node, c.need - 1, c.more, c.next));
        Alts out{{"", ref(c.next, q)}};
        const int again = c.more == kRegexUnbounded ? k : repeat(c.node, 0, c.more - 1, c.next);
        for (Seq& s : emit(*c.node, q, again)) out.push_back(std::move(s));
        return out;
    }

    bool tag_free(const RegexNode& n) {
        if (auto it = tag_free_.find(&n); it != tag_free_.end()) return it->second;
        bool free = n.kind != Kind::Chars || !n.chars.contains('<');
        for (const auto& kid : n.kids) free = free && tag_free(kid);
        return tag_free_[&n] = free;
    }

    // Node n read from state q, then continuation k.
    Alts emit(const RegexNode& n, int q, int k) {
        if (q == 0 && tag_free(n)) return {{regex_to_gbnf(n, raw_chars), ref(k, 0)}};
        switch (n.kind) {
            case Kind::Empty:
                return {{"", ref(k, q)}};
            case Kind::Begin:
            case Kind::End:
                throw std::invalid_argument("pattern anchors (^, $) are only supported at its start or end");
            case Kind::Chars: {
                (void)raw_chars(n.chars);  // rejects a class that matches nothing
                Alts out;
                for (const auto& [set, to] : tag_.split(n.chars, q)) out.push_back({raw_chars(set), ref(k, to)});
                return out;
            }
            case Kind::Group:
                return emit(n.kids[0], q, k);
            case Kind::Alt: {
                Alts out;
                for (const auto& kid : n.kids)
                    for (Seq& s : emit(kid, q, k)) out.push_back(std::move(s));
                return out;
            }
            case Kind::Concat:
                return emit_concat(n, q, k);
            case Kind::Repeat:
                return emit_repeat(n, q, k);
        }
        return {};
    }

    Alts emit_concat(const RegexNode& n, int q, int k) {
        if (n.kids.empty()) return {{"", ref(k, q)}};
        // From state 0 the tag-free parts at the front are one expression.
        size_t first = 0;
        std::string text;
        if (q == 0) {
            while (first < n.kids.size() && tag_free(n.kids[first])) {
                const std::string e = regex_to_gbnf(n.kids[first++], raw_chars);
                if (!e.empty()) text += (text.empty() ? "" : " ") + e;
            }
        }
        int rest = k;
        for (size_t i = n.kids.size(); i-- > first + 1;) rest = cont(Cont::Kind::Then, &n.kids[i], rest);
        if (first > 0) {
            if (first < n.kids.size()) rest = cont(Cont::Kind::Then, &n.kids[first], rest);
            return {{text, ref(rest, 0)}};
        }
        return emit(n.kids[0], q, rest);
    }

    Alts emit_repeat(const RegexNode& n, int q, int k) {
        if (n.max == 0) return {{"", ref(k, q)}};
        const RegexNode* body = &n.kids[0];
        uint32_t need = n.min, most = n.max;
        if (regex_nullable(*body)) {  // copies that match nothing can be left out
            auto it = non_empty_.find(body);
            if (it == non_empty_.end()) {
                auto ne = regex_non_empty(*body);
                it = non_empty_.emplace(body, ne ? &owned_.emplace_back(std::move(*ne)) : nullptr).first;
            }
            if (!it->second) return {{"", ref(k, q)}};
            body = it->second;
            need = 0;
        }
        const uint32_t more = most == kRegexUnbounded ? kRegexUnbounded : most - need;
        return this->body(repeat(body, need, more, k), q);
    }

    std::string render(const Alts& top, const std::string& name) {
        // A rule is productive when some alternative ends the value or refers to a productive rule.
        std::vector<char> productive(rules_.size(), 0);
        std::vector<std::vector<int>> users(rules_.size());
        std::vector<int> work;
        for (size_t r = 0; r < rules_.size(); ++r) {
            for (const Seq& s : rules_[r]) {
                if (s.ref < 0) {
                    if (!productive[r]) work.push_back(static_cast<int>(r));
                    productive[r] = 1;
                } else {
                    users[s.ref].push_back(static_cast<int>(r));
                }
            }
        }
        while (!work.empty()) {
            const int r = work.back();
            work.pop_back();
            for (int u : users[r]) {
                if (!productive[u]) {
                    productive[u] = 1;
                    work.push_back(u);
                }
            }
        }
        auto live = [&](const Seq& s) { return s.ref < 0 || productive[s.ref]; };
        auto rule_name = [&](int r) { return name + "-" + std::to_string(r); };
        auto alternatives = [&](const Alts& alts) {
            std::vector<std::string> seen;
            std::string out;
            for (const Seq& s : alts) {
                if (!live(s)) continue;
                std::string seq = s.text;
                if (s.ref >= 0) seq += (seq.empty() ? "" : " ") + rule_name(s.ref);
                if (seq.empty()) seq = "\"\"";
                if (std::find(seen.begin(), seen.end(), seq) != seen.end()) continue;
                out += (out.empty() ? "" : " | ") + seq;
                seen.push_back(std::move(seq));
            }
            return out;
        };
        const std::string root = alternatives(top);
        if (root.empty())
            throw std::invalid_argument("no text matches the pattern without containing '" + tag_.text() + "'");
        std::string out = name + " ::= " + root + "\n";
        // The rules reachable from the top, in the order first referred to.
        std::vector<char> written(rules_.size(), 0);
        std::vector<int> order;
        auto visit = [&](const Alts& alts) {
            for (const Seq& s : alts) {
                if (s.ref >= 0 && productive[s.ref] && !written[s.ref]) {
                    written[s.ref] = 1;
                    order.push_back(s.ref);
                }
            }
        };
        visit(top);
        for (size_t i = 0; i < order.size(); ++i) {
            visit(rules_[order[i]]);
            out += rule_name(order[i]) + " ::= " + alternatives(rules_[order[i]]) + "\n";
        }
        return out;
    }

    const TagAutomaton& tag_;
    RegexNode any_;
    std::deque<RegexNode> owned_;  // nodes made here (stable addresses)
    std::vector<Cont> conts_;
    std::map<std::tuple<int, const RegexNode*, int, uint32_t, uint32_t>, int> cont_ids_;
    std::map<const RegexNode*, bool> tag_free_;
    std::map<const RegexNode*, const RegexNode*> non_empty_;
    std::vector<Alts> rules_;
    std::vector<std::pair<int, int>> origin_;  // rule -> (continuation, tag state)
    std::deque<int> pending_;                  // rules whose alternatives are still to be written
    size_t alternatives_ = 0;
    int accept_ = -1;
};

}  // namespace

std::string raw_pattern_to_gbnf(std::string_view pattern, std::string_view close_tag, const std::string& name) {
    const TagAutomaton tag(close_tag);
    const Regex re = parse_regex(pattern, RegexOptions{true});
    return RawPattern(tag).run(re, name);
}

}  // namespace engine::gbnf
