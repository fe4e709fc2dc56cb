#include "engine/grammar/schema_pattern.h"

#include <cstdio>
#include <optional>
#include <stdexcept>

#include "engine/grammar/gbnf_text.h"
#include "engine/grammar/regex.h"
#include "engine/grammar/regex_gbnf.h"

namespace engine::gbnf {

using Kind = RegexNode::Kind;

bool regex_nullable(const RegexNode& n) {
    switch (n.kind) {
        case Kind::Empty:
        case Kind::Begin:
        case Kind::End:
            return true;
        case Kind::Chars:
            return false;
        case Kind::Group:
            return regex_nullable(n.kids[0]);
        case Kind::Repeat:
            return n.min == 0 || regex_nullable(n.kids[0]);
        case Kind::Concat:
            for (const auto& k : n.kids) {
                if (!regex_nullable(k)) return false;
            }
            return true;
        case Kind::Alt:
            for (const auto& k : n.kids) {
                if (regex_nullable(k)) return true;
            }
            return false;
    }
    return false;
}

std::optional<RegexNode> regex_non_empty(const RegexNode& n) {
    switch (n.kind) {
        case Kind::Empty:
        case Kind::Begin:
        case Kind::End:
            return std::nullopt;
        case Kind::Chars:
            return n;
        case Kind::Group:
            return regex_non_empty(n.kids[0]);
        case Kind::Alt: {
            RegexNode alt(Kind::Alt);
            for (const auto& k : n.kids) {
                if (auto s = regex_non_empty(k)) alt.kids.push_back(std::move(*s));
            }
            if (alt.kids.empty()) return std::nullopt;
            return alt;
        }
        case Kind::Repeat: {
            auto body = regex_non_empty(n.kids[0]);
            if (!body || n.max == 0) return std::nullopt;
            RegexNode rep(Kind::Repeat);
            rep.min = 1;
            rep.max = n.max;
            rep.kids.push_back(std::move(*body));
            return rep;
        }
        case Kind::Concat: {
            if (!regex_nullable(n)) return n;
            // All parts nullable: (first part non-empty, then the rest) | (first empty, rest non-empty)
            RegexNode alt(Kind::Alt);
            for (size_t i = 0; i < n.kids.size(); ++i) {
                auto head = regex_non_empty(n.kids[i]);
                if (!head) continue;
                RegexNode seq(Kind::Concat);
                seq.kids.push_back(std::move(*head));
                for (size_t j = i + 1; j < n.kids.size(); ++j) seq.kids.push_back(n.kids[j]);
                alt.kids.push_back(std::move(seq));
            }
            if (alt.kids.empty()) return std::nullopt;
            return alt;
        }
    }
    return std::nullopt;
}

namespace {

// The code points of `set` as they may appear inside a JSON string.
std::string json_chars(const CharSet& set) {
    if (set.empty()) throw std::invalid_argument("pattern has a character class that matches nothing");
    std::vector<std::string> alts;
    const CharSet raw(std::vector<CharRange>{{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}, true);
    std::vector<CharRange> keep;
    for (CharRange r : set.ranges()) {
        for (CharRange q : raw.ranges()) {
            const uint32_t lo = std::max(r.lo, q.lo), hi = std::min(r.hi, q.hi);
            if (lo <= hi) keep.push_back({lo, hi});
        }
    }
    if (!keep.empty()) alts.push_back(gbnf_class(CharSet(keep)));
    if (set.contains('"')) alts.push_back(gbnf_literal("\\\""));
    if (set.contains('\\')) alts.push_back(gbnf_literal("\\\\"));
    for (uint32_t c = 0; c < 0x20; ++c) {
        if (!set.contains(c)) continue;
        static const char* named[0x20] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                          nullptr, "\\b",   "\\t",   "\\n",   nullptr, "\\f",   "\\r"};
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
        alts.push_back(gbnf_literal(named[c] ? named[c] : buf));
    }
    if (alts.size() == 1) return alts[0];
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
    return out + ")";
}

}  // namespace

std::string raw_chars(const CharSet& set) {
    if (set.empty()) throw std::invalid_argument("pattern has a character class that matches nothing");
    return gbnf_class(set);
}

namespace {

std::string quantifier(uint32_t min, uint32_t max) {
    if (min == 0 && max == 1) return "?";
    if (max == kRegexUnbounded) {
        if (min == 0) return "*";
        if (min == 1) return "+";
        return "{" + std::to_string(min) + ",}";
    }
    if (min == max) return "{" + std::to_string(min) + "}";
    return "{" + std::to_string(min) + "," + std::to_string(max) + "}";
}

}  // namespace

std::string regex_to_gbnf(const RegexNode& n, CharsToGbnf chars) {
    switch (n.kind) {
        case Kind::Empty:
            return "";
        case Kind::Begin:
        case Kind::End:
            throw std::invalid_argument("pattern anchors (^, $) are only supported at its start or end");
        case Kind::Chars:
            return chars(n.chars);
        case Kind::Group: {
            const std::string inner = regex_to_gbnf(n.kids[0], chars);
            return inner.empty() ? "" : "(" + inner + ")";
        }
        case Kind::Concat: {
            std::string out;
            for (const auto& k : n.kids) {
                const std::string e = regex_to_gbnf(k, chars);
                if (!e.empty()) out += (out.empty() ? "" : " ") + e;
            }
            return out;
        }
        case Kind::Alt: {
            std::string out = "(";
            for (size_t i = 0; i < n.kids.size(); ++i) out += (i ? " | " : "") + regex_to_gbnf(n.kids[i], chars);
            return out + ")";
        }
        case Kind::Repeat: {
            if (n.max == 0) return "";
            const RegexNode& body = n.kids[0];
            if (regex_nullable(body)) {
                auto ne = regex_non_empty(body);
                if (!ne) return "";
                return "(" + regex_to_gbnf(*ne, chars) + ")" + quantifier(0, n.max);
            }
            return "(" + regex_to_gbnf(body, chars) + ")" + quantifier(n.min, n.max);
        }
    }
    return "";
}

namespace {

}  // namespace

std::vector<TopAlternative> top_alternatives(const Regex& re) {
    const RegexNode* root = &re.root;
    while (root->kind == Kind::Group) root = &root->kids[0];
    std::vector<const RegexNode*> alts;
    if (root->kind == Kind::Alt) {
        for (const auto& k : root->kids) alts.push_back(&k);
    } else {
        alts.push_back(root);
    }
    std::vector<TopAlternative> out;
    for (const RegexNode* alt : alts) {
        TopAlternative t;
        if (alt->kind == Kind::Concat) {
            for (const auto& k : alt->kids) t.parts.push_back(&k);
        } else {
            t.parts.push_back(alt);
        }
        while (!t.parts.empty() && t.parts.front()->kind == Kind::Begin) {
            t.begin = true;
            t.parts.erase(t.parts.begin());
        }
        while (!t.parts.empty() && t.parts.back()->kind == Kind::End) {
            t.end = true;
            t.parts.pop_back();
        }
        out.push_back(std::move(t));
    }
    return out;
}

std::string pattern_to_gbnf(std::string_view pattern, const std::string& char_rule) {
    const Regex re = parse_regex(pattern, RegexOptions{true});
    const std::vector<TopAlternative> alts = top_alternatives(re);
    std::vector<std::string> exprs;
    for (const TopAlternative& t : alts) {
        // Unanchored ends take any characters.
        std::string out = t.begin ? "" : char_rule + "*";
        for (const RegexNode* p : t.parts) {
            const std::string e = regex_to_gbnf(*p, json_chars);
            if (!e.empty()) out += (out.empty() ? "" : " ") + e;
        }
        if (!t.end) out += (out.empty() ? "" : " ") + char_rule + "*";
        exprs.push_back(out.empty() ? "\"\"" : out);
    }
    if (exprs.size() == 1) return exprs[0];
    std::string out = "(";
    for (size_t i = 0; i < exprs.size(); ++i) out += (i ? " | " : "") + exprs[i];
    return out + ")";
}

}  // namespace engine::gbnf
