// GBNF parsing: every construct (checked through the matcher) and every error with its position.
#include <catch2/catch.hpp>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_error.h"
#include "engine/grammar/grammar_matcher.h"

using engine::GrammarError;
using engine::GrammarMatcher;

namespace {

// Expects parsing to fail at (line, column) with a message containing `what`.
void expect_error(const std::string& gbnf, int line, int column, const std::string& what) {
    INFO("grammar: " << gbnf);
    try {
        GrammarMatcher m(gbnf);
        FAIL("no error");
    } catch (const GrammarError& e) {
        INFO("error: " << e.what());
        CHECK(e.line == line);
        CHECK(e.column == column);
        CHECK(e.message.find(what) != std::string::npos);
        CHECK(std::string(e.what()).find("line " + std::to_string(line)) == 0);
    }
}

}  // namespace

TEST_CASE("gbnf literals and escapes", "[grammar][parser]") {
    GrammarMatcher m(R"(root ::= "a\n\t\r\\\"\[\]\-\x41\u00e9\U0001F600")");
    CHECK(m.matches("a\n\t\r\\\"[]-A\xC3\xA9\xF0\x9F\x98\x80"));
    CHECK_FALSE(m.matches("a\n\t\r\\\"[]-A\xC3\xA9"));
    GrammarMatcher raw("root ::= \"h\xC3\xA9llo\"");  // raw UTF-8 in a literal
    CHECK(raw.matches("h\xC3\xA9llo"));
    GrammarMatcher empty(R"(root ::= "" "x" "")");
    CHECK(empty.matches("x"));
}

TEST_CASE("gbnf character classes", "[grammar][parser]") {
    GrammarMatcher m(R"(root ::= [a-cX_\-\]] [^"\\a-z] [\u0400-\u04FF])");
    CHECK(m.matches("aA\xD0\x96"));  // Ж
    CHECK(m.matches("_\xE2\x82\xAC\xD0\x80"));
    CHECK(m.matches("-5\xD0\x80"));
    CHECK(m.matches("]5\xD0\x80"));
    CHECK_FALSE(m.matches("d5\xD0\x80"));
    CHECK_FALSE(m.matches("a\"\xD0\x80"));
    CHECK_FALSE(m.matches("aq\xD0\x80"));
    CHECK_FALSE(m.matches("a5A"));
    GrammarMatcher dash("root ::= [-a] [a-]");  // '-' first or last is literal
    CHECK(dash.matches("--"));
    CHECK(dash.matches("aa"));
    GrammarMatcher dot("root ::= . . .");
    CHECK(dot.matches("a\n\xF0\x9F\x98\x80"));
    CHECK_FALSE(dot.matches("ab"));
}

TEST_CASE("gbnf repetitions", "[grammar][parser]") {
    auto count_ok = [](const std::string& rep, int n) {
        GrammarMatcher m("root ::= \"a\"" + rep + " \"b\"");
        return m.matches(std::string(size_t(n), 'a') + "b");
    };
    CHECK(count_ok("*", 0));
    CHECK(count_ok("*", 7));
    CHECK_FALSE(count_ok("+", 0));
    CHECK(count_ok("+", 1));
    CHECK(count_ok("+", 9));
    CHECK(count_ok("?", 0));
    CHECK(count_ok("?", 1));
    CHECK_FALSE(count_ok("?", 2));
    CHECK_FALSE(count_ok("{3}", 2));
    CHECK(count_ok("{3}", 3));
    CHECK_FALSE(count_ok("{3}", 4));
    CHECK_FALSE(count_ok("{2,}", 1));
    CHECK(count_ok("{2,}", 2));
    CHECK(count_ok("{2,}", 30));
    CHECK_FALSE(count_ok("{2,4}", 1));
    CHECK(count_ok("{2,4}", 2));
    CHECK(count_ok("{2,4}", 4));
    CHECK_FALSE(count_ok("{2,4}", 5));
    CHECK(count_ok("{0,2}", 0));
    CHECK(count_ok("{ 1 , 2 }", 2));
    // a repeated group and a repeated literal repeat as a whole
    GrammarMatcher g(R"(root ::= ("ab" | "c"){2} "xy"+)");
    CHECK(g.matches("abcxyxy"));
    CHECK(g.matches("ccxy"));
    CHECK_FALSE(g.matches("abxy"));
    CHECK_FALSE(g.matches("ccxyx"));
}

TEST_CASE("gbnf rules, groups, comments and newlines", "[grammar][parser]") {
    const char* text = R"(# a comment line
root ::= greeting ws name-list   # trailing comment
greeting ::=
    "hi" | "hello"
  | "hey"
ws ::= | " " ws
name-list ::= (
    Name_1          # inside parentheses newlines are free
    ("," Name_1)*
)
Name_1 ::= [A-Z] [a-z]*
)";
    GrammarMatcher m(text);
    CHECK(m.matches("hi Ann"));
    CHECK(m.matches("hey  Bo,Cy,Di"));
    CHECK(m.matches("helloAl"));
    CHECK_FALSE(m.matches("hi ann"));
    CHECK_FALSE(m.matches("yo Ann"));
    // CRLF line endings and a nested empty alternative
    GrammarMatcher crlf("root ::= a b\r\na ::= \"x\" | \"\"\r\nb ::= (\"y\" | )\r\n");
    CHECK(crlf.matches(""));
    CHECK(crlf.matches("xy"));
    CHECK(crlf.matches("y"));
    // another root name
    GrammarMatcher other("start ::= \"s\"\nroot ::= \"r\"", "start");
    CHECK(other.matches("s"));
    CHECK_FALSE(other.matches("r"));
}

TEST_CASE("gbnf syntax errors carry line and column", "[grammar][parser]") {
    expect_error("root ::= \"abc", 1, 10, "never closed");
    expect_error("root ::= [abc", 1, 10, "never closed");
    expect_error("root ::= \"a\\q\"", 1, 12, "unknown escape");
    expect_error("root ::= \"\\x4\"", 1, 11, "hex digits");
    expect_error("root ::= \"\\U00110000\"", 1, 11, "beyond U+10FFFF");
    expect_error("root = \"a\"", 1, 6, "expected '::='");
    expect_error("::= \"a\"", 1, 1, "expected a rule name");
    expect_error("root ::= \"a\")", 1, 13, "unmatched ')'");
    expect_error("root ::= (\"a\"", 1, 10, "never closed");
    expect_error("root ::= (\"a\" ]", 1, 15, "expected ')'");
    expect_error("root ::= \"a\" b ::= \"c\"", 1, 16, "own line");
    expect_error("root ::= []", 1, 10, "empty character class");
    expect_error("root ::= [z-a]", 1, 11, "ends before it starts");
    expect_error("root ::= *\"a\"", 1, 10, "nothing to repeat");
    expect_error("root ::= \"a\" | +", 1, 16, "nothing to repeat");
    expect_error("root ::= <think>", 1, 10, "needs a vocabulary");
    expect_error("root ::= \"a\" @", 1, 14, "unexpected '@'");
    // positions on later lines count code points, not bytes
    expect_error("root ::= a\na ::= \"\xC3\xA9\xC3\xA9\" \"\\z\"", 2, 13, "unknown escape");
    expect_error("root ::= a\n\n  | b\nb ::= \"x\" {", 4, 12, "expected a number");
    expect_error("root ::= \"a\"\nroot ::= \"b\"", 2, 1, "defined twice");
}

TEST_CASE("gbnf repetition bounds are validated", "[grammar][parser]") {
    expect_error("root ::= \"a\"{3,1}", 1, 13, "maximum below its minimum");
    expect_error("root ::= \"a\"{}", 1, 14, "expected a number");
    expect_error("root ::= \"a\"{,3}", 1, 14, "expected a number");
    expect_error("root ::= \"a\"{20000}", 1, 14, "too large");
    expect_error("root ::= \"a\"{1,99999}", 1, 16, "too large");
    expect_error("root ::= \"a\"{2 3}", 1, 16, "expected ',' or '}'");
    expect_error("root ::= \"a\"{2,3", 1, 17, "expected '}'");
    // the expanded size is bounded too
    const std::string big = "root ::= \"" + std::string(300, 'x') + "\"{10000}";
    expect_error(big, 1, int(big.find('{')) + 1, "too large");
}

TEST_CASE("gbnf undefined rules and missing root", "[grammar][parser]") {
    expect_error("root ::= item \"x\"", 1, 10, "undefined rule 'item'");
    expect_error("root ::= a\na ::= \"x\" | b-c", 2, 13, "undefined rule 'b-c'");
    expect_error("item ::= \"x\"", 1, 1, "no rule named 'root'");
    expect_error("", 1, 1, "defines no rules");
    expect_error("# only a comment\n", 1, 1, "defines no rules");
}

TEST_CASE("gbnf left recursion is detected", "[grammar][parser]") {
    expect_error("root ::= root \"a\" | \"b\"", 1, 1, "left recursion");
    expect_error("x ::= \"q\"\nroot ::= a\na ::= b \"x\"\nb ::= root | \"y\"", 2, 1,
                 "(root -> a -> b -> root)");
    // through a nullable prefix: opt can match "", so root can reach itself without input
    expect_error("root ::= opt root \"x\" | \"y\"\nopt ::= \"a\"?", 1, 1, "left recursion");
    expect_error("root ::= ws? (expr)\nexpr ::= ws* expr \"+\" | \"1\"\nws ::= \" \"", 2, 1,
                 "(expr -> expr)");
    // left recursion through a repetition whose item can be empty
    expect_error("root ::= (root? \"a\")*", 1, 1, "left recursion");
    // right recursion and recursion after a terminal are fine
    GrammarMatcher ok("root ::= \"(\" root \")\" | item root | \"\"\nitem ::= [a-z]");
    CHECK(ok.matches("a(b(c))"));
    CHECK_FALSE(ok.matches("(a)b"));
}

// llama.cpp accepts repetitions of items that can match "" (hand-written grammars have them:
// `(comment | ws)*` with `ws ::= [ \t]*`); they are rewritten to repeat the item minus "".
TEST_CASE("gbnf repetitions of items that can match empty text", "[grammar][parser]") {
    GrammarMatcher opt_star("root ::= (\"a\"?)* \"b\"");
    for (const char* s : {"b", "ab", "aaab"}) CHECK(opt_star.matches(s));
    for (const char* s : {"", "a", "abb", "ba"}) CHECK_FALSE(opt_star.matches(s));

    GrammarMatcher plus("root ::= x+\nx ::= \"b\" | \"\"");
    for (const char* s : {"", "b", "bbb"}) CHECK(plus.matches(s));
    CHECK_FALSE(plus.matches("a"));

    GrammarMatcher only_empty("root ::= (\"\"?)* \"x\"");
    CHECK(only_empty.matches("x"));
    CHECK_FALSE(only_empty.matches("xx"));

    GrammarMatcher code("root ::= (comment | ws)* \"end\"\ncomment ::= \"#\" [a-z]* \"\\n\"\nws ::= [ \\t]*");
    CHECK(code.matches("  \t#ab\n  #\nend"));
    CHECK(code.matches("end"));
    CHECK_FALSE(code.matches("#ab end"));

    // The rewrite of n optional items copies ~n^2/2 elements: bounded like any repetition.
    std::string many = "root ::= (";
    for (int i = 0; i < 3000; ++i) many += "\"a\"? ";
    expect_error(many + ")*", 1, int(many.size()) + 2, "too large");

    // The same language as without the empty alternative, checked on every string over {a, b, c}
    // up to length 6; nested and bounded forms too.
    const std::vector<std::pair<const char*, const char*>> same = {
        {"root ::= (\"a\"? \"b\"?)*", "root ::= [ab]*"},
        {"root ::= ((\"a\"?)*)* \"c\"", "root ::= \"a\"* \"c\""},
        {"root ::= (x | y)+\nx ::= \"a\"*\ny ::= \"b\" \"c\"?", "root ::= (\"a\" | \"b\" | \"bc\")*"},
        {"root ::= (\"a\"? \"b\"){2,} (\"c\"*){0,2}", "root ::= (\"ab\" | \"b\"){2,} \"c\"*"},
    };
    for (const auto& [grammar, reference] : same) {
        INFO(grammar);
        GrammarMatcher g(grammar), r(reference);
        std::vector<std::string> words{""};
        for (size_t begin = 0, len = 0; len < 6; ++len) {
            const size_t end = words.size();
            for (size_t i = begin; i < end; ++i)
                for (char c : {'a', 'b', 'c'}) words.push_back(words[i] + c);
            begin = end;
        }
        for (const auto& w : words) {
            INFO(w);
            CHECK(g.matches(w) == r.matches(w));
        }
    }
}

TEST_CASE("gbnf token references", "[grammar][parser]") {
    auto rules = engine::gbnf::parse_gbnf("root ::= <[12]> !<[3]> <think>",
                                          [](std::string_view t) -> std::optional<int32_t> {
                                              if (t == "<think>") return 7;
                                              return std::nullopt;
                                          });
    REQUIRE(rules.has_tokens());
    std::vector<std::pair<engine::gbnf::Op, uint32_t>> got;
    for (uint32_t p = rules.rules[0].alts[0]; rules.elems[p].op != engine::gbnf::Op::End; ++p) {
        got.push_back({rules.elems[p].op, rules.elems[p].arg});
    }
    using engine::gbnf::Op;
    CHECK(got == std::vector<std::pair<Op, uint32_t>>{{Op::Token, 12}, {Op::TokenNot, 3}, {Op::Token, 7}});
    CHECK_THROWS_AS(
        engine::gbnf::parse_gbnf("root ::= <nope>", [](std::string_view) { return std::nullopt; }),
        GrammarError);
    expect_error("root ::= <[12", 1, 14, "expected ']>'");
}
