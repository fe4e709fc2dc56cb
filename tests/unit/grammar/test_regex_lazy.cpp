// The regex subset (parser errors, search semantics with captures, incremental feeding) and lazy
// grammars that wake up on trigger words, patterns and tokens.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <regex>

#include "engine/grammar/grammar.h"
#include "engine/grammar/regex_vm.h"
#include "grammar_test_util.h"

using namespace engine;

namespace {

// Search result as (start of the first non-empty group, or of the match) or -1.
long search(const std::string& pattern, const std::string& text, size_t chunk = 1) {
    gbnf::RegexSearch s(gbnf::RegexProgram::compile(gbnf::parse_regex(pattern)));
    for (size_t i = 0; i < text.size(); i += chunk) s.feed(text.substr(i, chunk));
    auto m = s.match();
    if (!m) return -1;
    for (size_t g = 2; g + 1 < m->groups.size(); g += 2) {
        if (m->groups[g] >= 0 && m->groups[g + 1] > m->groups[g]) return long(m->groups[g]);
    }
    return long(m->begin);
}

std::pair<long, long> whole(const std::string& pattern, const std::string& text) {
    gbnf::RegexSearch s(gbnf::RegexProgram::compile(gbnf::parse_regex(pattern)));
    s.feed(text);
    auto m = s.match();
    if (!m) return {-1, -1};
    return {long(m->begin), long(m->end)};
}

}  // namespace

TEST_CASE("regex search finds the leftmost-first match", "[grammar][regex]") {
    CHECK(search("abc", "xxabcxx") == 2);
    CHECK(search("abc", "xxabxx") == -1);
    CHECK(search("a|ab", "xab") == 1);
    CHECK(whole("a|ab", "xab") == std::pair<long, long>{1, 2});  // first alternative wins
    CHECK(whole("ab|a", "xab") == std::pair<long, long>{1, 3});
    CHECK(whole("a+", "baaab") == std::pair<long, long>{1, 4});   // greedy
    CHECK(whole("a+?", "baaab") == std::pair<long, long>{1, 2});  // lazy
    CHECK(whole("a{2,3}", "aaaa") == std::pair<long, long>{0, 3});
    CHECK(whole("[0-9]{2}", "a1b22") == std::pair<long, long>{3, 5});
    CHECK(whole("^ab", "xab") == std::pair<long, long>{-1, -1});
    CHECK(whole("^ab", "abx") == std::pair<long, long>{0, 2});
    CHECK(whole("ab$", "abab") == std::pair<long, long>{2, 4});
    CHECK(whole("^a.c$",
                "a\xC3\xA9"
                "c") == std::pair<long, long>{0, 4});  // '.' is one code point
    CHECK(whole("^a.c$", "a\nc") == std::pair<long, long>{-1, -1});
    CHECK(whole("\\d+\\s\\w+", "n: 42 apples") == std::pair<long, long>{3, 12});
    CHECK(whole("[^a-z]+", "abc123def") == std::pair<long, long>{3, 6});
    CHECK(whole("(?:ab)+", "ababab") == std::pair<long, long>{0, 6});
    CHECK(whole("x*", "abc") == std::pair<long, long>{0, 0});  // empty match at the start
    CHECK(whole("\\u00e9|\\x41", "zA") == std::pair<long, long>{1, 2});
}

TEST_CASE("regex capture groups pick the grammar start", "[grammar][regex]") {
    CHECK(search("[\\s\\S]*?(<tool_call>)[\\s\\S]*", "Sure! <tool_call>{\"a\":1}") == 6);
    CHECK(search("call: (\\{)", "x call: {") == 8);
    CHECK(search("(a)?(b)", "xb") == 1);    // group 1 did not participate: group 2 starts it
    CHECK(search("(a*)c(b)", "xcb") == 2);  // group 1 is empty: the first non-empty one counts
}

TEST_CASE("regex search fed in pieces equals search of the whole text", "[grammar][regex]") {
    const std::string text = "prefix \xE4\xB8\xAD<tool_call> {\"name\": \"f\"} suffix";
    for (const char* p :
         {"<tool_call>", "\\{\"name\"", "[\\s\\S]*?(<tool_call>[\\s\\S]*)", "\xE4\xB8\xAD<", "f\"\\}"}) {
        const long expected = search(p, text, text.size());
        for (size_t chunk : {1, 2, 3, 7}) CHECK(search(p, text, chunk) == expected);
    }
    // invalid UTF-8 bytes read as U+FFFD and do not break later matches
    CHECK(search("ok", "\xFF\xC3ok") == 2);
    CHECK(search("\\uFFFDk", "\xC3k") == 0);
}

TEST_CASE("regex syntax errors", "[grammar][regex]") {
    auto err = [](const std::string& p) {
        try {
            gbnf::parse_regex(p);
        } catch (const gbnf::RegexError& e) {
            return long(e.position);
        }
        return -1L;
    };
    CHECK(err("(ab") == 0);
    CHECK(err("ab)") == 2);
    CHECK(err("[ab") == 0);
    CHECK(err("*a") == 0);
    CHECK(err("a**") == 2);
    CHECK(err("a{3,1}") == 1);
    CHECK(err("(?=a)") == 0);
    CHECK(err("(?<!a)b") == 0);
    CHECK(err("(a)\\1") == 3);
    CHECK(err("\\bword") == 0);
    CHECK(err("\\p{L}") == 0);
    CHECK(err("[z-a]") == 1);
    CHECK(err("a\\") == 1);
    CHECK(err("\\q") == 0);
    CHECK(err("a{99999}") == 2);
    CHECK(err("a{2}b{,3}[x-y]\\.(?:c|d)*?$") == -1);  // "{,3}" is a literal in ECMAScript
}

namespace {

const std::vector<std::string>& pieces() {
    static const auto p = grammar_test::synthetic_pieces();
    return p;
}
Token id_of(const std::string& piece) {
    auto it = std::find(pieces().begin() + 3, pieces().end(), piece);
    REQUIRE(it != pieces().end());
    return Token(it - pieces().begin());
}
std::shared_ptr<const GrammarVocab> vocab() {
    static auto v = std::make_shared<const GrammarVocab>(pieces(), std::vector<Token>{0, 1});
    return v;
}
// Whether apply() leaves every candidate untouched.
bool untouched(Grammar& g) {
    TokenDataArray cur;
    for (size_t i = 0; i < pieces().size(); ++i) cur.data.push_back({Token(i), 0.5f, 0.0f});
    g.apply(cur);
    return std::all_of(cur.data.begin(), cur.data.end(), [](const TokenData& d) { return d.logit == 0.5f; });
}
void feed(Grammar& g, const std::vector<std::string>& toks) {
    for (const auto& t : toks) g.accept(id_of(t));
}
const char* kCall = R"(root ::= "<tool>" "{" [a-z]* "}")";

}  // namespace

TEST_CASE("lazy grammar waits for a trigger word", "[grammar][lazy]") {
    Grammar g(kCall, "root", vocab(), GrammarTriggers{{"<tool>"}, {}, {}});
    CHECK_FALSE(g.active());
    CHECK(untouched(g));
    CHECK(g.allows(id_of("!")));
    feed(g, {"h", "i", " ", "<", "t", "o", "o"});  // "<too" is not yet the trigger
    CHECK_FALSE(g.active());
    feed(g, {"l", ">"});  // the grammar starts at "<tool>" and has consumed it
    CHECK(g.active());
    CHECK_FALSE(untouched(g));
    CHECK(g.allows(id_of("{")));
    CHECK_FALSE(g.allows(id_of("x")));
    feed(g, {"{", "a", "b", "}"});
    CHECK(g.complete());
    CHECK(g.allows(0));
    // reset goes back to waiting; a clone keeps its own trigger state
    g.reset();
    CHECK_FALSE(g.active());
    feed(g, {"<tool>", "{"});
    auto c = g.clone();
    g.reset();
    CHECK(static_cast<Grammar&>(*c).active());
    CHECK(c->allows(id_of("ab")));
}

TEST_CASE("lazy grammar trigger inside a token keeps the rest of the token", "[grammar][lazy]") {
    Grammar g(R"(root ::= "{" [a-z]* "}")", "root", vocab(), GrammarTriggers{{"{"}, {}, {}});
    feed(g, {"a"});
    // the trigger word "{" is followed by '"' in the same token, and the grammar forbids it
    CHECK_THROWS_AS(g.accept(id_of("{\"")), std::runtime_error);
    // a trigger in the middle of a token: the grammar starts there and sees the rest of the token
    Grammar mid(R"(root ::= "b" [a-z]* "!")", "root", vocab(), GrammarTriggers{{"b"}, {}, {}});
    feed(mid, {"x", "abc"});
    CHECK(mid.active());
    CHECK(mid.allows(id_of("!")));
    CHECK_FALSE(mid.allows(id_of("1")));
    CHECK_FALSE(mid.complete());
}

TEST_CASE("lazy grammar with trigger patterns", "[grammar][lazy]") {
    // The grammar starts at the first capture group.
    Grammar g(R"(root ::= "{" [a-z]* "}")", "root", vocab(), GrammarTriggers{{}, {"call: *(\\{)"}, {}});
    feed(g, {"c", "a", "l", "l", ":", " ", " "});
    CHECK_FALSE(g.active());
    feed(g, {"{"});
    CHECK(g.active());
    CHECK(g.allows(id_of("a")));
    CHECK_FALSE(g.allows(id_of("{")));
    // A full-match pattern (^...$) must match all the text so far.
    Grammar full(R"(root ::= "ab" [a-z]*)", "root", vocab(), GrammarTriggers{{}, {"^\\s*ab$"}, {}});
    feed(full, {"x", "a", "b"});  // "xab" does not match ^\s*ab$
    CHECK_FALSE(full.active());
    Grammar full2(R"(root ::= " "* "ab" [a-z]*)", "root", vocab(), GrammarTriggers{{}, {"^\\s*ab$"}, {}});
    feed(full2, {" ", "ab"});
    CHECK(full2.active());  // the whole text matched: the grammar starts at the match, " ab"
    CHECK(full2.allows(id_of("c")));
    CHECK_FALSE(full2.allows(id_of(" ")));
    CHECK_THROWS_AS(Grammar(kCall, "root", vocab(), GrammarTriggers{{}, {"(unclosed"}, {}}),
                    std::invalid_argument);
}

TEST_CASE("lazy grammar with trigger tokens", "[grammar][lazy]") {
    const Token tool = id_of("<tool>");
    Grammar g(kCall, "root", vocab(), GrammarTriggers{{}, {}, {tool}});
    feed(g, {"<", "t", "o", "o", "l", ">"});  // the same text, but not the trigger token
    CHECK_FALSE(g.active());
    g.reset();
    g.accept(tool);
    CHECK(g.active());
    CHECK(g.allows(id_of("{")));
    // a token reference in the grammar sees the trigger token itself
    Grammar t("root ::= <[" + std::to_string(tool) + "]> \"{\"", "root", vocab(),
              GrammarTriggers{{}, {}, {tool}});
    t.accept(tool);
    CHECK(t.active());
    CHECK(t.allows(id_of("{")));
}

TEST_CASE("earliest trigger wins when several fire together", "[grammar][lazy]") {
    Grammar g(R"(root ::= "ab" [a-z]*)", "root", vocab(), GrammarTriggers{{"ba"}, {"ab"}, {}});
    feed(g, {"x", "a"});
    CHECK_FALSE(g.active());
    feed(g, {"ba"});  // "ab" starts at 1, "ba" at 2
    CHECK(g.active());
    CHECK(g.allows(id_of("c")));  // consumed "aba", all lowercase so far
}

// (Patterns where a quantified group can match "" again after its minimum are left out: libstdc++
// keeps such an empty iteration, which ECMA-262 rejects.)
TEST_CASE("regex search agrees with std::regex (ECMAScript) on ASCII text", "[grammar][regex]") {
    const char* patterns[] = {"a|ab",       "(a|ab)(c|bcd)(d*)", "x*",       "(a+)(a*)b",    "(a*?)(a+)",
                              "[b-d]+?e|c", "(?:ab|a)(b?)c",     "^(a|b)*$", "\\d{2,3}?\\w", "(\\s+|x)y",
                              "a(b(c)?)*d", "[^ab]+$",           "(a|bb)+c", "(x)?(y)?z",    ".{3}"};
    const char* texts[] = {"",       "a",   "ab",    "abcd",    "aaab", "xxbcde", "abbc",  "abab",
                           "12345x", "  y", "abcbd", "zzab\nq", "b",    "yz",     "ab\ncd"};
    for (const char* p : patterns) {
        const std::regex re(p, std::regex::ECMAScript);
        const auto prog = gbnf::RegexProgram::compile(gbnf::parse_regex(p));
        for (const char* t : texts) {
            INFO("pattern " << p << " text '" << t << "'");
            std::cmatch expected;
            const bool found = std::regex_search(t, expected, re);
            gbnf::RegexSearch s(prog);
            s.feed(t);
            auto got = s.match();
            REQUIRE(got.has_value() == found);
            if (!found) continue;
            CHECK(long(got->begin) == long(expected.position(0)));
            CHECK(long(got->end) == long(expected.position(0) + expected.length(0)));
            for (size_t g = 1; g < expected.size(); ++g) {
                const long exp_start = expected[g].matched ? long(expected.position(g)) : -1;
                CHECK(got->groups[2 * g] == exp_start);
            }
        }
    }
}
