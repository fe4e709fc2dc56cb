#include "engine/grammar/gbnf_parser.h"

#include "engine/grammar/grammar_error.h"
#include "engine/grammar/utf8.h"

namespace engine::gbnf {

bool Rules::has_tokens() const {
    for (const Elem& e : elems) {
        if (e.op == Op::Token || e.op == Op::TokenNot) return true;
    }
    return false;
}

void line_column(std::string_view text, size_t offset, int& line, int& column) {
    line = 1;
    column = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        const auto c = uint8_t(text[i]);
        if (c == '\n') {
            ++line;
            column = 1;
        } else if ((c & 0xC0) != 0x80) {  // count code points, not continuation bytes
            ++column;
        }
    }
}

uint32_t find_root(const Rules& rules, std::string_view root) {
    if (auto id = rules.find(root)) return *id;
    throw GrammarError(1, 1, "the grammar has no rule named '" + std::string(root) + "'");
}

namespace {

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

class Parser {
  public:
    Parser(std::string_view text, const TokenLookup& lookup) : src_(text), lookup_(lookup) {}

    Rules run() {
        skip_space(true);
        while (!eof()) parse_rule();
        return flatten();
    }

  private:
    using Seq = std::vector<Elem>;
    struct Body {
        std::vector<Seq> alts;
        bool defined = false;
    };

    [[noreturn]] void fail(size_t offset, std::string msg) const {
        int line, column;
        line_column(src_, offset, line, column);
        throw GrammarError(line, column, std::move(msg));
    }

    bool eof() const { return pos_ >= src_.size(); }
    char peek(size_t k = 0) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }

    // Skips blanks and comments; newlines only where the dialect allows them.
    void skip_space(bool newlines) {
        while (!eof()) {
            const char c = peek();
            if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
                ++pos_;
            } else if (c == '#') {
                while (!eof() && peek() != '\n' && peek() != '\r') ++pos_;
            } else {
                break;
            }
        }
    }

    // At a newline ending a top-level sequence: does the rule go on with a line starting with '|'?
    bool continues_with_bar() {
        const size_t save = pos_;
        skip_space(true);
        if (peek() == '|') return true;
        pos_ = save;
        return false;
    }

    std::string describe_here() const {
        if (eof()) return "end of input";
        const char c = peek();
        if (c == '\n' || c == '\r') return "end of line";
        if (src_.substr(pos_, 3) == "::=") return "'::=' (each rule must start on its own line)";
        size_t p = pos_;
        uint32_t cp;
        if (decode_utf8(src_, p, cp)) return "'" + std::string(src_.substr(pos_, p - pos_)) + "'";
        return "an invalid UTF-8 byte";
    }

    std::string parse_name() {
        const size_t start = pos_;
        while (!eof() && is_name_char(peek())) ++pos_;
        if (pos_ == start) fail(pos_, "expected a rule name, found " + describe_here());
        return std::string(src_.substr(start, pos_ - start));
    }

    uint32_t add_rule(std::string name, Rule::Origin origin, uint32_t owner, size_t offset) {
        const auto id = uint32_t(out_.rules.size());
        Rule r;
        r.name = std::move(name);
        r.origin = origin;
        r.owner = origin == Rule::Origin::User ? id : owner;
        r.offset = offset;
        out_.rules.push_back(std::move(r));
        bodies_.emplace_back();
        first_ref_.push_back(offset);
        return id;
    }

    // The id of user rule `name`, creating a not-yet-defined entry at its first reference.
    uint32_t user_rule(const std::string& name, size_t offset) {
        auto it = out_.by_name.find(name);
        if (it != out_.by_name.end()) return it->second;
        const uint32_t id = add_rule(name, Rule::Origin::User, 0, offset);
        out_.by_name.emplace(name, id);
        return id;
    }

    uint32_t generated_rule(Rule::Origin origin, uint32_t owner, size_t offset) {
        std::string name = out_.rules[owner].name + "_" + std::to_string(out_.rules.size());
        const uint32_t id = add_rule(std::move(name), origin, owner, offset);
        bodies_[id].defined = true;
        return id;
    }

    void parse_rule() {
        const size_t start = pos_;
        const std::string name = parse_name();
        skip_space(false);
        if (src_.substr(pos_, 3) != "::=") {
            fail(pos_, "expected '::=' after rule name '" + name + "', found " + describe_here());
        }
        pos_ += 3;
        const uint32_t id = user_rule(name, start);
        if (bodies_[id].defined) {
            int line, column;
            line_column(src_, out_.rules[id].offset, line, column);
            fail(start, "rule '" + name + "' is defined twice (first at line " + std::to_string(line) + ")");
        }
        bodies_[id].defined = true;
        out_.rules[id].offset = start;
        skip_space(true);
        auto alts = parse_alternates(id, false);
        bodies_[id].alts = std::move(alts);
        if (!eof() && peek() != '\n' && peek() != '\r') {
            if (peek() == ')') fail(pos_, "unmatched ')'");
            fail(pos_, "unexpected " + describe_here());
        }
        skip_space(true);
    }

    std::vector<Seq> parse_alternates(uint32_t owner, bool nested) {
        std::vector<Seq> alts;
        alts.push_back(parse_sequence(owner, nested));
        for (;;) {
            if (peek() == '|' || (!nested && (peek() == '\n' || peek() == '\r') && continues_with_bar())) {
                ++pos_;
                skip_space(true);
                alts.push_back(parse_sequence(owner, nested));
            } else {
                return alts;
            }
        }
    }

    Seq parse_sequence(uint32_t owner, bool nested) {
        Seq seq;
        bool have_item = false;
        size_t item_start = 0;  // index in seq of the last item's first element
        while (!eof()) {
            const char c = peek();
            const size_t at = pos_;
            if (c == '"') {
                item_start = seq.size();
                parse_literal(seq);
            } else if (c == '[') {
                item_start = seq.size();
                parse_class(seq);
            } else if (c == '.') {
                item_start = seq.size();
                seq.push_back({Op::Chars, intern_set(CharSet::any())});
                ++pos_;
            } else if (c == '(') {
                if (++depth_ > kMaxNesting) {
                    fail(at, "parentheses nest deeper than the limit of " + std::to_string(kMaxNesting));
                }
                ++pos_;
                skip_space(true);
                const uint32_t sub = generated_rule(Rule::Origin::Group, owner, at);
                auto alts = parse_alternates(owner, true);
                bodies_[sub].alts = std::move(alts);
                if (peek() != ')') {
                    if (eof()) fail(at, "'(' is never closed");
                    fail(pos_, "expected ')' or '|', found " + describe_here());
                }
                ++pos_;
                --depth_;
                item_start = seq.size();
                seq.push_back({Op::Rule, sub});
            } else if (c == '<' || c == '!') {
                item_start = seq.size();
                parse_token(seq);
            } else if (is_name_char(c)) {
                const std::string name = parse_name();
                item_start = seq.size();
                seq.push_back({Op::Rule, user_rule(name, at)});
            } else if (c == '*' || c == '+' || c == '?' || c == '{') {
                if (!have_item) fail(at, std::string("'") + c + "' has nothing to repeat");
                uint64_t min = 0;
                std::optional<uint64_t> max;
                ++pos_;
                if (c == '+') min = 1;
                if (c == '?') max = 1;
                if (c == '{') parse_bounds(at, nested, min, max);
                repeat(seq, item_start, min, max, owner, at);
            } else {
                break;
            }
            have_item = true;
            skip_space(nested);
        }
        return seq;
    }

    uint64_t parse_count() {
        const size_t start = pos_;
        uint64_t n = 0;
        while (!eof() && peek() >= '0' && peek() <= '9') {
            n = n * 10 + uint64_t(peek() - '0');
            if (n > kMaxRepetition) {
                fail(start,
                     "repetition count is too large (the limit is " + std::to_string(kMaxRepetition) + ")");
            }
            ++pos_;
        }
        return n;
    }

    // After '{': "m}", "m,}" or "m,n}".
    void parse_bounds(size_t open, bool nested, uint64_t& min, std::optional<uint64_t>& max) {
        skip_space(nested);
        if (!(peek() >= '0' && peek() <= '9')) {
            fail(pos_, "expected a number after '{', found " + describe_here());
        }
        min = parse_count();
        skip_space(nested);
        if (peek() == '}') {
            max = min;
        } else if (peek() == ',') {
            ++pos_;
            skip_space(nested);
            if (peek() >= '0' && peek() <= '9') {
                max = parse_count();
                skip_space(nested);
            }
            if (peek() != '}') fail(pos_, "expected '}', found " + describe_here());
        } else {
            fail(pos_, "expected ',' or '}', found " + describe_here());
        }
        ++pos_;
        if (max && *max < min) {
            fail(open, "repetition {" + std::to_string(min) + "," + std::to_string(*max) +
                           "} has its maximum below its minimum");
        }
    }

    // Rewrites the last item x (seq[item_start..]) as in llama.cpp:
    //   x{m,n} -> x..x (m times) R(n-m), R(k) ::= x R(k-1) | "", R(1) ::= x | ""
    //   x{m,}  -> x..x (m times) R,      R ::= x R | ""
    void repeat(Seq& seq, size_t item_start, uint64_t min, std::optional<uint64_t> max, uint32_t owner,
                size_t at) {
        Seq item(seq.begin() + long(item_start), seq.end());
        seq.resize(item_start);
        if (item.empty()) return;  // repeating "" is still ""
        const uint64_t optional = max ? *max - min : 1;
        n_elems_ += item.size() * (min + optional) + 2 * optional;
        if (n_elems_ > kMaxElements) fail(at, "this repetition makes the grammar too large");
        for (uint64_t i = 0; i < min; ++i) seq.insert(seq.end(), item.begin(), item.end());
        if (max && *max == min) return;
        uint32_t prev = 0;
        for (uint64_t k = 0; k < optional; ++k) {
            const uint32_t r = generated_rule(Rule::Origin::Repeat, owner, at);
            out_.rules[r].repeated_item = uint32_t(item.size());
            Seq body = item;
            if (!max) {
                body.push_back({Op::Rule, r});
            } else if (k > 0) {
                body.push_back({Op::Rule, prev});
            }
            bodies_[r].alts = {std::move(body), Seq{}};
            prev = r;
        }
        seq.push_back({Op::Rule, prev});
    }

    // One character of a literal or class at pos_, escapes included.
    uint32_t parse_char() {
        const size_t at = pos_;
        if (peek() != '\\') {
            uint32_t cp;
            if (!decode_utf8(src_, pos_, cp)) fail(at, "invalid UTF-8 in the grammar text");
            return cp;
        }
        if (pos_ + 1 >= src_.size()) fail(at, "unexpected end of input after '\\'");
        const char e = peek(1);
        pos_ += 2;
        switch (e) {
            case 'n':
                return '\n';
            case 'r':
                return '\r';
            case 't':
                return '\t';
            case '\\':
            case '"':
            case '[':
            case ']':
            case '-':
                return uint32_t(e);
            case 'x':
                return parse_hex(at, 2);
            case 'u':
                return parse_hex(at, 4);
            case 'U':
                return parse_hex(at, 8);
            default:
                fail(at, "unknown escape '\\" + std::string(1, e) + "'");
        }
    }

    uint32_t parse_hex(size_t at, int digits) {
        uint64_t v = 0;
        for (int i = 0; i < digits; ++i) {
            const int h = hex_value(peek());
            if (h < 0) {
                fail(at, "expected " + std::to_string(digits) + " hex digits after '\\" + src_[at + 1] + "'");
            }
            v = v * 16 + uint64_t(h);
            ++pos_;
        }
        if (v > kMaxCodePoint) fail(at, "code point beyond U+10FFFF");
        return uint32_t(v);
    }

    void parse_literal(Seq& seq) {
        const size_t start = pos_++;
        for (;;) {
            if (eof()) fail(start, "string literal is never closed");
            if (peek() == '"') break;
            seq.push_back({Op::Chars, intern_set(CharSet::single(parse_char()))});
        }
        ++pos_;
    }

    void parse_class(Seq& seq) {
        const size_t start = pos_++;
        const bool negate = peek() == '^';
        if (negate) ++pos_;
        std::vector<CharRange> ranges;
        for (;;) {
            if (eof()) fail(start, "character class is never closed");
            if (peek() == ']') break;
            const size_t at = pos_;
            const uint32_t lo = parse_char();
            uint32_t hi = lo;
            if (peek() == '-' && peek(1) != ']' && pos_ + 1 < src_.size()) {
                ++pos_;
                hi = parse_char();
                if (hi < lo) fail(at, "character range ends before it starts");
            }
            ranges.push_back({lo, hi});
        }
        ++pos_;
        if (ranges.empty()) fail(start, "empty character class");
        CharSet set(std::move(ranges), negate);
        if (set.empty()) fail(start, "character class matches nothing");
        seq.push_back({Op::Chars, intern_set(std::move(set))});
    }

    void parse_token(Seq& seq) {
        const size_t start = pos_;
        const bool negate = peek() == '!';
        if (negate) ++pos_;
        if (peek() != '<') fail(pos_, "expected '<' after '!'");
        const size_t open = pos_++;
        uint64_t id = 0;
        if (peek() == '[') {
            ++pos_;
            const size_t digits = pos_;
            while (!eof() && peek() >= '0' && peek() <= '9') {
                id = id * 10 + uint64_t(peek() - '0');
                if (id > uint64_t(INT32_MAX)) fail(digits, "token id is too large");
                ++pos_;
            }
            if (pos_ == digits) fail(pos_, "expected a token id after '<['");
            if (peek() != ']' || peek(1) != '>') fail(pos_, "expected ']>' after the token id");
            pos_ += 2;
        } else {
            while (!eof() && peek() != '>' && peek() != '\n') ++pos_;
            if (peek() != '>') fail(start, "token reference is never closed with '>'");
            ++pos_;
            const std::string_view text = src_.substr(open, pos_ - open);
            if (!lookup_) fail(start, "token reference " + std::string(text) + " needs a vocabulary");
            auto found = lookup_(text);
            if (!found) fail(start, std::string(text) + " is not a single token of the vocabulary");
            id = uint64_t(*found);
        }
        seq.push_back({negate ? Op::TokenNot : Op::Token, uint32_t(id)});
    }

    uint32_t intern_set(CharSet set) {
        std::string key;
        for (CharRange r : set.ranges()) {
            key.append(reinterpret_cast<const char*>(&r), sizeof r);
        }
        auto [it, inserted] = set_ids_.emplace(std::move(key), uint32_t(out_.sets.size()));
        if (inserted) out_.sets.push_back(std::move(set));
        return it->second;
    }

    Rules flatten() {
        // Report the undefined rule referenced earliest in the text.
        size_t worst = SIZE_MAX;
        uint32_t worst_id = 0;
        for (uint32_t i = 0; i < out_.rules.size(); ++i) {
            if (!bodies_[i].defined && first_ref_[i] < worst) {
                worst = first_ref_[i];
                worst_id = i;
            }
        }
        if (worst != SIZE_MAX) fail(worst, "undefined rule '" + out_.rules[worst_id].name + "'");
        for (uint32_t i = 0; i < out_.rules.size(); ++i) {
            for (const Seq& alt : bodies_[i].alts) {
                out_.rules[i].alts.push_back(uint32_t(out_.elems.size()));
                out_.elems.insert(out_.elems.end(), alt.begin(), alt.end());
                out_.elems.push_back({Op::End, 0});
            }
        }
        if (out_.rules.empty()) fail(0, "the grammar defines no rules");
        remove_empty_repeat_items(out_, src_);
        check_left_recursion(out_, src_);
        return std::move(out_);
    }

    std::string_view src_;
    const TokenLookup& lookup_;
    size_t pos_ = 0;
    Rules out_;
    std::vector<Body> bodies_;
    std::vector<size_t> first_ref_;  // offset of the first reference (or definition) of each rule
    std::unordered_map<std::string, uint32_t> set_ids_;
    size_t n_elems_ = 0;
    size_t depth_ = 0;  // parentheses open at pos_
};

}  // namespace

Rules parse_gbnf(std::string_view text, const TokenLookup& lookup) {
    return Parser(text, lookup).run();
}

}  // namespace engine::gbnf
