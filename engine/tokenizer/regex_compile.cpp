// Regex construction: parsing a pattern into a tree, simplifying it, and emitting the backtracking
// programs that regex.cpp runs.
#include "engine/tokenizer/regex.h"

#include <stdexcept>

#include "engine/tokenizer/unicode.h"

namespace engine {

namespace {

struct Node {
    enum Kind { Char, Seq, Alt, Repeat, Look, Begin, End, WordB, NotWordB } kind = Seq;
    std::vector<int> classes;  // Char: all must match
    std::vector<Node> kids;    // Seq, Alt; Repeat and Look have one
    int min = 0, max = -1;
    bool greedy = true;
    bool negated = false;  // Look
};

bool nullable(const Node& n) {
    switch (n.kind) {
        case Node::Char:
            return false;
        case Node::Seq:
            for (const auto& k : n.kids)
                if (!nullable(k)) return false;
            return true;
        case Node::Alt:
            for (const auto& k : n.kids)
                if (nullable(k)) return true;
            return false;
        case Node::Repeat:
            return n.min == 0 || nullable(n.kids[0]);
        default:
            return true;  // assertions consume nothing
    }
}

}  // namespace

// Parses the pattern into a Node tree, simplifies it, and emits the backtracking programs.
struct RegexCompiler {
    Regex& re;
    std::vector<uint32_t> p;
    size_t i = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw std::invalid_argument("regex '" + re.pattern_ + "': " + what + " at code point " +
                                    std::to_string(i));
    }
    bool more() const { return i < p.size(); }
    uint32_t peek() const { return more() ? p[i] : 0; }
    bool eat(uint32_t c) {
        if (more() && p[i] == c) {
            ++i;
            return true;
        }
        return false;
    }

    int add_class(Regex::CharClass c) {
        re.classes_.push_back(std::move(c));
        return int(re.classes_.size()) - 1;
    }
    Node char_node(Regex::CharClass c) {
        Node n;
        n.kind = Node::Char;
        n.classes.push_back(add_class(std::move(c)));
        return n;
    }
    static Regex::CharClass single(Regex::ClassItem item) {
        Regex::CharClass c;
        c.items.push_back(item);
        return c;
    }
    static Regex::ClassItem range(uint32_t lo, uint32_t hi) {
        return {Regex::ClassItem::Range, false, lo, hi, 0};
    }

    uint32_t parse_hex(int digits) {
        uint32_t v = 0;
        for (int k = 0; k < digits; ++k) {
            if (!more()) fail("truncated hex escape");
            const uint32_t c = p[i++];
            int d = -1;
            if (c >= '0' && c <= '9') d = int(c - '0');
            if (c >= 'a' && c <= 'f') d = int(c - 'a' + 10);
            if (c >= 'A' && c <= 'F') d = int(c - 'A' + 10);
            if (d < 0) fail("bad hex digit");
            v = v * 16 + uint32_t(d);
        }
        return v;
    }

    uint32_t category_mask(const std::string& name) {
        using namespace unicode;
        static const std::pair<const char*, CategoryMask> kGroups[] = {
            {"L", kLetter},
            {"M", kMark},
            {"N", kNumber},
            {"P", kPunctuation},
            {"S", kSymbol},
            {"Z", kSeparator},
            {"C", kControl | bit(Category::Cn)},
        };
        static const char* const kNames[kNumCategories] = {
            "Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
            "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co",
        };
        for (const auto& [n, m] : kGroups)
            if (name == n) return m;
        for (int c = 0; c < kNumCategories; ++c)
            if (name == kNames[c]) return bit(Category(c));
        fail("unknown Unicode category \\p{" + name + "}");
    }

    // After a backslash. Returns true and sets item for class-like escapes, false and sets lit for
    // single code points.
    bool parse_escape(Regex::ClassItem& item, uint32_t& lit, bool in_class) {
        if (!more()) fail("trailing backslash");
        const uint32_t c = p[i++];
        using K = Regex::ClassItem;
        switch (c) {
            case 's':
                item = {K::Space, false};
                return true;
            case 'S':
                item = {K::Space, true};
                return true;
            case 'd':
                item = {K::Digit, false};
                return true;
            case 'D':
                item = {K::Digit, true};
                return true;
            case 'w':
                item = {K::Word, false};
                return true;
            case 'W':
                item = {K::Word, true};
                return true;
            case 'p':
            case 'P': {
                if (!eat('{')) fail("expected { after \\p");
                std::string name;
                while (more() && peek() != '}') name += char(p[i++]);
                if (!eat('}')) fail("unterminated \\p{");
                item = {K::Categories, c == 'P', 0, 0, category_mask(name)};
                re.uses_categories_ = true;
                return true;
            }
            case 'r':
                lit = '\r';
                return false;
            case 'n':
                lit = '\n';
                return false;
            case 't':
                lit = '\t';
                return false;
            case 'f':
                lit = '\f';
                return false;
            case 'v':
                lit = '\v';
                return false;
            case '0':
                lit = 0;
                return false;
            case 'x':
                lit = parse_hex(2);
                return false;
            case 'u':
                lit = parse_hex(4);
                return false;
            case 'b':
                if (in_class) {
                    lit = '\b';
                    return false;
                }
                break;
            default:
                break;
        }
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
            fail("unsupported escape \\" + std::string(1, char(c)));
        lit = c;  // escaped punctuation is itself
        return false;
    }

    Node parse_class() {  // after '['
        Regex::CharClass cls;
        cls.negated = eat('^');
        while (true) {
            if (!more()) fail("unterminated character class");
            if (eat(']')) break;
            Regex::ClassItem item{};
            uint32_t lo = 0;
            if (eat('\\')) {
                if (parse_escape(item, lo, true)) {
                    cls.items.push_back(item);
                    continue;
                }
            } else {
                lo = p[i++];
            }
            uint32_t hi = lo;
            if (peek() == '-' && i + 1 < p.size() && p[i + 1] != ']') {
                ++i;
                if (eat('\\')) {
                    if (parse_escape(item, hi, true)) fail("class escape used as a range end");
                } else {
                    hi = p[i++];
                }
                if (hi < lo) fail("reversed range");
            }
            cls.items.push_back(range(lo, hi));
        }
        return char_node(std::move(cls));
    }

    Node parse_atom() {
        const uint32_t c = p[i++];
        Node n;
        switch (c) {
            case '(': {
                if (eat('?')) {
                    if (eat(':')) {
                        n = parse_alt();
                    } else if (peek() == '=' || peek() == '!') {
                        n.kind = Node::Look;
                        n.negated = p[i++] == '!';
                        n.kids.push_back(parse_alt());
                    } else {
                        fail("unsupported group type");
                    }
                } else {
                    n = parse_alt();
                }
                if (!eat(')')) fail("missing )");
                return n;
            }
            case '[':
                return parse_class();
            case '.': {
                Regex::CharClass cls;
                cls.negated = true;
                for (uint32_t t : {0x0Au, 0x0Du, 0x2028u, 0x2029u}) cls.items.push_back(range(t, t));
                return char_node(std::move(cls));
            }
            case '^':
                n.kind = Node::Begin;
                return n;
            case '$':
                n.kind = Node::End;
                return n;
            case '\\': {
                if (peek() == 'b' || peek() == 'B') {
                    n.kind = p[i++] == 'b' ? Node::WordB : Node::NotWordB;
                    return n;
                }
                Regex::ClassItem item{};
                uint32_t lit = 0;
                if (parse_escape(item, lit, false)) return char_node(single(item));
                return char_node(single(range(lit, lit)));
            }
            case ')':
                fail("unbalanced )");
            case '*':
            case '+':
            case '?':
                fail("quantifier without operand");
            default:
                return char_node(single(range(c, c)));
        }
    }

    // Parses {m}, {m,}, {m,n} at i (pointing at '{'); leaves i unchanged and returns false otherwise.
    bool parse_braces(int& mn, int& mx) {
        size_t j = i + 1;
        auto number = [&](int& v) {
            const size_t start = j;
            v = 0;
            while (j < p.size() && p[j] >= '0' && p[j] <= '9' && v < 100000) v = v * 10 + int(p[j++] - '0');
            return j > start;
        };
        if (!number(mn)) return false;
        mx = mn;
        if (j < p.size() && p[j] == ',') {
            ++j;
            if (!number(mx)) mx = -1;
        }
        if (j >= p.size() || p[j] != '}') return false;
        if (mx >= 0 && mx < mn) fail("bad repetition bounds");
        i = j + 1;
        return true;
    }

    Node parse_seq() {
        Node seq;
        seq.kind = Node::Seq;
        while (more() && peek() != '|' && peek() != ')') {
            Node atom = parse_atom();
            int mn = 0, mx = -1;
            bool quantified = true;
            if (eat('*')) {
                mn = 0, mx = -1;
            } else if (eat('+')) {
                mn = 1, mx = -1;
            } else if (eat('?')) {
                mn = 0, mx = 1;
            } else if (peek() == '{' && parse_braces(mn, mx)) {
            } else {
                quantified = false;
            }
            if (quantified) {
                if (atom.kind == Node::Begin || atom.kind == Node::End || atom.kind == Node::WordB ||
                    atom.kind == Node::NotWordB || atom.kind == Node::Look)
                    fail("quantified assertion");
                Node rep;
                rep.kind = Node::Repeat;
                rep.min = mn, rep.max = mx;
                rep.greedy = !eat('?');
                if (peek() == '+') fail("possessive quantifiers are not supported");
                rep.kids.push_back(std::move(atom));
                seq.kids.push_back(std::move(rep));
            } else {
                seq.kids.push_back(std::move(atom));
            }
        }
        return seq;
    }

    Node parse_alt() {
        Node alt;
        alt.kind = Node::Alt;
        alt.kids.push_back(parse_seq());
        while (eat('|')) alt.kids.push_back(parse_seq());
        return alt;
    }

    // Collapses one-element sequences and alternations, and turns "(?=X)Y" with single-character X and
    // Y into one character test (X and Y): the lookahead-emulated class intersections of some
    // pre-tokenizers then become plain character runs.
    static void simplify(Node& n) {
        for (auto& k : n.kids) simplify(k);
        if (n.kind == Node::Seq) {
            std::vector<Node> out;
            for (auto& k : n.kids) {
                if (k.kind == Node::Char && !out.empty() && out.back().kind == Node::Look &&
                    !out.back().negated && out.back().kids[0].kind == Node::Char) {
                    Node merged = std::move(k);
                    const auto& extra = out.back().kids[0].classes;
                    merged.classes.insert(merged.classes.end(), extra.begin(), extra.end());
                    out.back() = std::move(merged);
                } else {
                    out.push_back(std::move(k));
                }
            }
            n.kids = std::move(out);
        }
        if ((n.kind == Node::Seq || n.kind == Node::Alt) && n.kids.size() == 1) {
            Node only = std::move(n.kids[0]);
            n = std::move(only);
        }
    }

    int add_pred(const std::vector<int>& classes) {
        re.preds_.push_back(classes);
        return int(re.preds_.size()) - 1;
    }

    void emit(const Node& n, std::vector<Regex::Inst>& prog) {
        using Op = Regex::Op;
        switch (n.kind) {
            case Node::Char:
                prog.push_back({Op::Char, false, add_pred(n.classes)});
                break;
            case Node::Seq:
                for (const auto& k : n.kids) emit(k, prog);
                break;
            case Node::Alt: {
                std::vector<size_t> jumps;
                for (size_t k = 0; k < n.kids.size(); ++k) {
                    size_t split = 0;
                    const bool last = k + 1 == n.kids.size();
                    if (!last) {
                        split = prog.size();
                        prog.push_back({Op::Split});
                        prog[split].a = int(prog.size());
                    }
                    emit(n.kids[k], prog);
                    if (!last) {
                        jumps.push_back(prog.size());
                        prog.push_back({Op::Jmp});
                        prog[split].b = int(prog.size());
                    }
                }
                for (size_t j : jumps) prog[j].a = int(prog.size());
                break;
            }
            case Node::Repeat: {
                const Node& body = n.kids[0];
                if (body.kind == Node::Char) {
                    Regex::Inst in{Op::Run, n.greedy, add_pred(body.classes)};
                    in.min = n.min, in.max = n.max;
                    prog.push_back(in);
                    break;
                }
                for (int k = 0; k < n.min; ++k) emit(body, prog);
                if (n.max < 0) {
                    if (nullable(body)) fail("unbounded repetition of a group that can match nothing");
                    const size_t loop = prog.size();
                    prog.push_back({Op::Split});
                    emit(body, prog);
                    prog.push_back({Op::Jmp, false, int(loop)});
                    const int body_start = int(loop + 1), out = int(prog.size());
                    prog[loop].a = n.greedy ? body_start : out;
                    prog[loop].b = n.greedy ? out : body_start;
                } else {
                    std::vector<size_t> splits;
                    for (int k = n.min; k < n.max; ++k) {
                        splits.push_back(prog.size());
                        prog.push_back({Op::Split});
                        emit(body, prog);
                    }
                    const int out = int(prog.size());
                    for (size_t s : splits) {
                        prog[s].a = n.greedy ? int(s + 1) : out;
                        prog[s].b = n.greedy ? out : int(s + 1);
                    }
                }
                break;
            }
            case Node::Look: {
                const int index = compile_program(n.kids[0]);
                prog.push_back({Op::Look, n.negated, index});
                break;
            }
            case Node::Begin:
                prog.push_back({Op::Begin});
                break;
            case Node::End:
                prog.push_back({Op::End});
                break;
            case Node::WordB:
                prog.push_back({Op::WordB});
                break;
            case Node::NotWordB:
                prog.push_back({Op::NotWordB});
                break;
        }
    }

    int compile_program(const Node& n) {
        const int index = int(re.programs_.size());
        re.programs_.emplace_back();
        std::vector<Regex::Inst> prog;
        emit(n, prog);
        prog.push_back({Regex::Op::Match});
        re.programs_[index] = std::move(prog);
        return index;
    }

    void compile() {
        Node root = parse_alt();
        if (more()) fail("unbalanced )");
        simplify(root);
        compile_program(root);
    }
};

Regex::Regex(std::string_view pattern) : pattern_(pattern) {
    RegexCompiler c{*this, unicode::decode_utf8(pattern)};
    c.compile();
}

}  // namespace engine
