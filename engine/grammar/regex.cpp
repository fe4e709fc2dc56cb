#include "engine/grammar/regex.h"

#include "engine/grammar/utf8.h"

namespace engine::gbnf {

CharSet regex_class_digit() {
    return CharSet({{'0', '9'}});
}
CharSet regex_class_word() {
    return CharSet({{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}});
}
CharSet regex_class_space() {
    return CharSet({{'\t', '\r'},
                    {' ', ' '},
                    {0xA0, 0xA0},
                    {0x1680, 0x1680},
                    {0x2000, 0x200A},
                    {0x2028, 0x2029},
                    {0x202F, 0x202F},
                    {0x205F, 0x205F},
                    {0x3000, 0x3000},
                    {0xFEFF, 0xFEFF}});
}
CharSet regex_class_dot() {
    return CharSet({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}, true);
}

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

class RegexParser {
  public:
    RegexParser(std::string_view p, RegexOptions o) : src_(p), opts_(o) {}

    Regex run() {
        Regex re;
        re.root = parse_alt();
        if (!eof()) fail(pos_, "unmatched ')'");
        re.captures = captures_;
        return re;
    }

  private:
    [[noreturn]] void fail(size_t at, const std::string& msg) const { throw RegexError(at, msg); }
    bool eof() const { return pos_ >= src_.size(); }
    char peek(size_t k = 0) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }

    RegexNode parse_alt() {
        RegexNode first = parse_concat();
        if (peek() != '|') return first;
        RegexNode alt{RegexNode::Kind::Alt};
        alt.kids.push_back(std::move(first));
        while (peek() == '|') {
            ++pos_;
            alt.kids.push_back(parse_concat());
        }
        return alt;
    }

    RegexNode parse_concat() {
        RegexNode seq{RegexNode::Kind::Concat};
        while (!eof() && peek() != '|' && peek() != ')') {
            const size_t at = pos_;
            RegexNode atom = parse_atom();
            if (parse_quantifier(atom, at)) {
                // a quantifier directly after another one ("a**") has nothing to repeat
                if (peek() == '*' || peek() == '+' || peek() == '?' || quantifier_ahead()) {
                    fail(pos_, "nothing to repeat");
                }
            }
            seq.kids.push_back(std::move(atom));
        }
        if (seq.kids.size() == 1) return std::move(seq.kids[0]);
        if (seq.kids.empty()) return RegexNode{RegexNode::Kind::Empty};
        return seq;
    }

    // Whether a "{n}", "{n,}" or "{n,m}" quantifier starts here (otherwise '{' is a literal).
    bool quantifier_ahead() const {
        if (peek() != '{') return false;
        size_t p = pos_ + 1;
        auto digits = [&] {
            const size_t s = p;
            while (p < src_.size() && src_[p] >= '0' && src_[p] <= '9') ++p;
            return p > s;
        };
        if (!digits()) return false;
        if (p < src_.size() && src_[p] == ',') {
            ++p;
            digits();
        }
        return p < src_.size() && src_[p] == '}';
    }

    uint32_t parse_number() {
        uint64_t n = 0;
        const size_t at = pos_;
        while (peek() >= '0' && peek() <= '9') {
            n = n * 10 + uint64_t(peek() - '0');
            if (n > kRegexMaxRepeat) fail(at, "repetition count is too large");
            ++pos_;
        }
        return uint32_t(n);
    }

    bool parse_quantifier(RegexNode& atom, size_t atom_at) {
        uint32_t min, max;
        const size_t at = pos_;
        const char c = peek();
        if (c == '*') {
            min = 0, max = kRegexUnbounded, ++pos_;
        } else if (c == '+') {
            min = 1, max = kRegexUnbounded, ++pos_;
        } else if (c == '?') {
            min = 0, max = 1, ++pos_;
        } else if (quantifier_ahead()) {
            ++pos_;
            min = max = parse_number();
            if (peek() == ',') {
                ++pos_;
                max = peek() == '}' ? kRegexUnbounded : parse_number();
            }
            ++pos_;  // '}'
            if (max < min) fail(at, "repetition maximum is below its minimum");
        } else {
            return false;
        }
        if (atom.kind == RegexNode::Kind::Begin || atom.kind == RegexNode::Kind::End) {
            fail(atom_at, "an anchor cannot be repeated");
        }
        bool greedy = true;
        if (peek() == '?') {
            greedy = false;
            ++pos_;
        }
        RegexNode rep{RegexNode::Kind::Repeat};
        rep.min = min;
        rep.max = max;
        rep.greedy = greedy;
        rep.kids.push_back(std::move(atom));
        atom = std::move(rep);
        return true;
    }

    RegexNode chars(CharSet s) {
        RegexNode n{RegexNode::Kind::Chars};
        n.chars = std::move(s);
        return n;
    }

    RegexNode parse_atom() {
        const size_t at = pos_;
        const char c = peek();
        switch (c) {
            case '(':
                return parse_group();
            case '[':
                return chars(parse_class());
            case '.':
                ++pos_;
                return chars(regex_class_dot());
            case '^':
                ++pos_;
                return RegexNode{RegexNode::Kind::Begin};
            case '$':
                ++pos_;
                return RegexNode{RegexNode::Kind::End};
            case '*':
            case '+':
            case '?':
                fail(at, "nothing to repeat");
            case '{':
                if (quantifier_ahead()) fail(at, "nothing to repeat");
                ++pos_;
                return chars(CharSet::single('{'));
            case '\\':
                return chars(parse_escape(false));
            default: {
                uint32_t cp;
                if (!decode_utf8(src_, pos_, cp)) fail(at, "invalid UTF-8 in the pattern");
                return chars(CharSet::single(cp));
            }
        }
    }

    RegexNode parse_group() {
        const size_t open = pos_++;
        if (++depth_ > kRegexMaxNesting) {
            fail(open, "groups nest deeper than the limit of " + std::to_string(kRegexMaxNesting));
        }
        int capture = -1;
        if (peek() == '?') {
            if (peek(1) == ':') {
                pos_ += 2;
            } else if (peek(1) == '<' && peek(2) != '=' && peek(2) != '!') {
                pos_ += 2;
                while (!eof() && peek() != '>') ++pos_;
                if (eof()) fail(open, "unterminated group name");
                ++pos_;
                capture = ++captures_;
            } else {
                fail(open, "lookahead and lookbehind are not supported");
            }
        } else {
            capture = ++captures_;
        }
        RegexNode inner = parse_alt();
        if (peek() != ')') fail(open, "unterminated group");
        ++pos_;
        --depth_;
        RegexNode g{RegexNode::Kind::Group};
        g.capture = capture;
        g.kids.push_back(std::move(inner));
        return g;
    }

    CharSet parse_class() {
        const size_t open = pos_++;
        const bool negate = peek() == '^';
        if (negate) ++pos_;
        std::vector<CharRange> ranges;
        for (;;) {
            if (eof()) fail(open, "unterminated character class");
            if (peek() == ']') break;
            const size_t at = pos_;
            CharSet lo = class_atom();
            if (peek() == '-' && peek(1) != ']' && pos_ + 1 < src_.size()) {
                ++pos_;
                CharSet hi = class_atom();
                if (lo.ranges().size() != 1 || hi.ranges().size() != 1 || lo.size() != 1 || hi.size() != 1) {
                    fail(at, "a class escape cannot bound a range");
                }
                const uint32_t a = lo.ranges()[0].lo, b = hi.ranges()[0].lo;
                if (b < a) fail(at, "character range out of order");
                ranges.push_back({a, b});
            } else {
                for (CharRange r : lo.ranges()) ranges.push_back(r);
            }
        }
        ++pos_;
        return CharSet(std::move(ranges), negate);
    }

    CharSet class_atom() {
        if (peek() == '\\') return parse_escape(true);
        const size_t at = pos_;
        uint32_t cp;
        if (!decode_utf8(src_, pos_, cp)) fail(at, "invalid UTF-8 in the pattern");
        return CharSet::single(cp);
    }

    uint32_t parse_hex(size_t at, int digits) {
        uint32_t v = 0;
        for (int i = 0; i < digits; ++i) {
            const int h = hex_digit(peek());
            if (h < 0) fail(at, "malformed hex escape");
            v = v * 16 + uint32_t(h);
            ++pos_;
        }
        return v;
    }

    // After a backslash: an escaped character or class.
    CharSet parse_escape(bool in_class) {
        const size_t at = pos_++;
        if (eof()) fail(at, "pattern ends with a backslash");
        const char e = peek();
        ++pos_;
        switch (e) {
            case 'd':
                return regex_class_digit();
            case 'D':
                return CharSet(regex_class_digit().ranges(), true);
            case 'w':
                return regex_class_word();
            case 'W':
                return CharSet(regex_class_word().ranges(), true);
            case 's':
                return opts_.ascii_space ? CharSet({{'\t', '\r'}, {' ', ' '}}) : regex_class_space();
            case 'S':
                return CharSet(regex_class_space().ranges(), true);
            case 'n':
                return CharSet::single('\n');
            case 'r':
                return CharSet::single('\r');
            case 't':
                return CharSet::single('\t');
            case 'f':
                return CharSet::single('\f');
            case 'v':
                return CharSet::single('\v');
            case '0':
                if (peek() >= '0' && peek() <= '9') fail(at, "octal escapes are not supported");
                return CharSet::single(0);
            case 'x':
                return CharSet::single(parse_hex(at, 2));
            case 'u': {
                if (peek() == '{') {
                    ++pos_;
                    uint32_t v = 0;
                    int n = 0;
                    while (hex_digit(peek()) >= 0 && n < 6)
                        v = v * 16 + uint32_t(hex_digit(src_[pos_++])), ++n;
                    if (n == 0 || peek() != '}' || v > kMaxCodePoint) fail(at, "malformed \\u{...} escape");
                    ++pos_;
                    return CharSet::single(v);
                }
                return CharSet::single(parse_hex(at, 4));
            }
            case 'b':
                if (in_class) return CharSet::single('\b');
                fail(at, "word boundaries (\\b) are not supported");
            case 'B':
                fail(at, "word boundaries (\\B) are not supported");
            case 'p':
            case 'P':
                fail(at, "Unicode property escapes are not supported");
            case 'k':
                fail(at, "backreferences are not supported");
            case 'c':
                fail(at, "control escapes (\\c) are not supported");
            default:
                if (e >= '1' && e <= '9') fail(at, "backreferences are not supported");
                if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
                    fail(at, std::string("unknown escape \\") + e);
                }
                --pos_;
                uint32_t cp;
                if (!decode_utf8(src_, pos_, cp)) fail(at, "invalid UTF-8 in the pattern");
                return CharSet::single(cp);
        }
    }

    std::string_view src_;
    RegexOptions opts_;
    size_t pos_ = 0;
    int captures_ = 0;
    uint32_t depth_ = 0;  // groups open at pos_
};

}  // namespace

Regex parse_regex(std::string_view pattern, RegexOptions options) {
    return RegexParser(pattern, options).run();
}

}  // namespace engine::gbnf
