#include "engine/grammar/schema_pattern.h"

#include <cstdio>
#include <optional>
#include <stdexcept>

#include "engine/grammar/gbnf_text.h"
#include "engine/grammar/regex.h"

namespace engine::gbnf {

namespace {

using Kind = RegexNode::Kind;

bool nullable(const RegexNode& n) {
    switch (n.kind) {
        case Kind::Empty:
        case Kind::Begin:
        case Kind::End:
            return true;
        case Kind::Chars:
            return false;
        case Kind::Group:
            return nullable(n.kids[0]);
        case Kind::Repeat:
            return n.min == 0 || nullable(n.kids[0]);
        case Kind::Concat:
            for (const auto& k : n.kids) {
                if (!nullable(k)) return false;
            }
            return true;
        case Kind::Alt:
            for (const auto& k : n.kids) {
                if (nullable(k)) return true;
            }
            return false;
    }
    return false;
}

// A node matching the non-empty strings of n (nullopt if it has none). GBNF rejects repeating an
// item that can match "", so x* with a nullable x is written as (x without "")*.
std::optional<RegexNode> non_empty(const RegexNode& n) {
    switch (n.kind) {
        case Kind::Empty:
        case Kind::Begin:
        case Kind::End:
            return std::nullopt;
        case Kind::Chars:
            return n;
        case Kind::Group:
            return non_empty(n.kids[0]);
        case Kind::Alt: {
            RegexNode alt(Kind::Alt);
            for (const auto& k : n.kids) {
                if (auto s = non_empty(k)) alt.kids.push_back(std::move(*s));
            }
            if (alt.kids.empty()) return std::nullopt;
            return alt;
        }
        case Kind::Repeat: {
            auto body = non_empty(n.kids[0]);
            if (!body || n.max == 0) return std::nullopt;
            RegexNode rep(Kind::Repeat);
            rep.min = 1;
            rep.max = n.max;
            rep.kids.push_back(std::move(*body));
            return rep;
        }
        case Kind::Concat: {
            if (!nullable(n)) return n;
            // All parts nullable: (first part non-empty, then the rest) | (first empty, rest non-empty)
            RegexNode alt(Kind::Alt);
            for (size_t i = 0; i < n.kids.size(); ++i) {
                auto head = non_empty(n.kids[i]);
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

std::string emit(const RegexNode& n) {
    switch (n.kind) {
        case Kind::Empty:
            return "";
        case Kind::Begin:
        case Kind::End:
            throw std::invalid_argument("pattern anchors (^, $) are only supported at its start or end");
        case Kind::Chars:
            return json_chars(n.chars);
        case Kind::Group: {
            const std::string inner = emit(n.kids[0]);
            return inner.empty() ? "" : "(" + inner + ")";
        }
        case Kind::Concat: {
            std::string out;
            for (const auto& k : n.kids) {
                const std::string e = emit(k);
                if (!e.empty()) out += (out.empty() ? "" : " ") + e;
            }
            return out;
        }
        case Kind::Alt: {
            std::string out = "(";
            for (size_t i = 0; i < n.kids.size(); ++i) out += (i ? " | " : "") + emit(n.kids[i]);
            return out + ")";
        }
        case Kind::Repeat: {
            if (n.max == 0) return "";
            const RegexNode& body = n.kids[0];
            if (nullable(body)) {
                auto ne = non_empty(body);
                if (!ne) return "";
                return "(" + emit(*ne) + ")" + quantifier(0, n.max);
            }
            return "(" + emit(body) + ")" + quantifier(n.min, n.max);
        }
    }
    return "";
}

// One top-level alternative: strips a leading ^ and a trailing $; unanchored ends take any text.
std::string emit_top(const RegexNode& alt, const std::string& char_rule) {
    std::vector<const RegexNode*> parts;
    if (alt.kind == Kind::Concat) {
        for (const auto& k : alt.kids) parts.push_back(&k);
    } else {
        parts.push_back(&alt);
    }
    bool begin = false, end = false;
    while (!parts.empty() && parts.front()->kind == Kind::Begin) {
        begin = true;
        parts.erase(parts.begin());
    }
    while (!parts.empty() && parts.back()->kind == Kind::End) {
        end = true;
        parts.pop_back();
    }
    std::string out = begin ? "" : char_rule + "*";
    for (const RegexNode* p : parts) {
        const std::string e = emit(*p);
        if (!e.empty()) out += (out.empty() ? "" : " ") + e;
    }
    if (!end) out += (out.empty() ? "" : " ") + char_rule + "*";
    return out.empty() ? "\"\"" : out;
}

}  // namespace

std::string pattern_to_gbnf(std::string_view pattern, const std::string& char_rule) {
    Regex re = parse_regex(pattern, RegexOptions{true});
    const RegexNode* root = &re.root;
    while (root->kind == Kind::Group) root = &root->kids[0];
    if (root->kind != Kind::Alt) return emit_top(*root, char_rule);
    std::string out = "(";
    for (size_t i = 0; i < root->kids.size(); ++i)
        out += (i ? " | " : "") + emit_top(root->kids[i], char_rule);
    return out + ")";
}

}  // namespace engine::gbnf
