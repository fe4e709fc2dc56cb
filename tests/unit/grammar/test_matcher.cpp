// Matching text against grammars: acceptance, rejection, prefixes and UTF-8 split anywhere.
#include <catch2/catch.hpp>

#include "engine/grammar/grammar_matcher.h"
#include "grammar_test_util.h"

using engine::GrammarMatcher;

TEST_CASE("matcher accepts and rejects strings", "[grammar][matcher]") {
    GrammarMatcher m(R"G(
root ::= expr
expr ::= term (("+" | "-") term)*
term ::= num | "(" expr ")"
num  ::= [0-9]+
)G");
    CHECK(m.matches("1+2-(3+40)"));
    CHECK(m.matches("((7))"));
    CHECK_FALSE(m.matches("1+"));
    CHECK_FALSE(m.matches("(1"));
    CHECK_FALSE(m.matches("1++2"));
    CHECK_FALSE(m.matches(""));
    CHECK(m.accepts_prefix("1+(2"));
    CHECK_FALSE(m.accepts_prefix("1+)"));

    // incremental: a rejected chunk leaves the state as it was
    CHECK(m.accept("1+("));
    CHECK_FALSE(m.complete());
    CHECK_FALSE(m.accept("x"));
    CHECK(m.accept("2)"));
    CHECK(m.complete());
    m.reset();
    CHECK_FALSE(m.complete());
}

TEST_CASE("matcher handles UTF-8 split across chunks", "[grammar][matcher]") {
    GrammarMatcher m("root ::= \"\xC3\xA9\" [\\u4e00-\\u4e0f] .");
    CHECK(m.accept("\xC3"));  // first byte of é: kept as a pending sequence
    CHECK_FALSE(m.complete());
    CHECK(m.accept("\xA9\xE4"));
    CHECK(m.accept("\xB8"));
    CHECK_FALSE(m.accept("\xB9"));  // E4 B8 B9 is U+4E39, outside [U+4E00, U+4E0F]
    CHECK(m.accept("\x80"));        // U+4E00
    CHECK(m.accept("\xF0\x9F"));
    CHECK_FALSE(m.complete());  // a pending sequence is never complete
    CHECK(m.accept("\x98\x80"));
    CHECK(m.complete());

    // A partial sequence is pruned as soon as no completion can match.
    GrammarMatcher cjk("root ::= [\\u4e00-\\u4e0f]");
    CHECK(cjk.accepts_prefix("\xE4"));            // U+4000..U+4FFF
    CHECK(cjk.accepts_prefix("\xE4\xB8"));        // U+4E00..U+4E3F
    CHECK_FALSE(cjk.accepts_prefix("\xE4\xB9"));  // U+4E40..U+4E7F
    CHECK_FALSE(cjk.accepts_prefix("\xE5"));
    GrammarMatcher ascii("root ::= [a-z]+");
    CHECK_FALSE(ascii.accepts_prefix("a\xC3"));
}

TEST_CASE("matcher rejects invalid UTF-8", "[grammar][matcher]") {
    GrammarMatcher any("root ::= .*");
    CHECK(any.matches("a\xC3\xA9\xF0\x9F\x98\x80"));
    CHECK_FALSE(any.accepts_prefix("\xFF"));
    CHECK_FALSE(any.accepts_prefix("\x80"));      // continuation without a lead byte
    CHECK_FALSE(any.accepts_prefix("\xC0\x80"));  // overlong NUL
    CHECK_FALSE(any.accepts_prefix("\xE0\x80"));  // overlong 3-byte prefix
    CHECK_FALSE(any.accepts_prefix("\xF4\x90"));  // beyond U+10FFFF
    CHECK_FALSE(any.accepts_prefix("\xC3\x41"));  // lead byte followed by ASCII
    CHECK(any.accepts_prefix("\xF4\x8F\xBF"));
    CHECK_FALSE(any.matches("\xC3"));  // truncated at the end
}

TEST_CASE("matcher handles deep nesting and ambiguity", "[grammar][matcher]") {
    GrammarMatcher nest("root ::= \"(\" root \")\" | \"x\"");
    const std::string deep = std::string(300, '(') + "x" + std::string(300, ')');
    CHECK(nest.matches(deep));
    CHECK_FALSE(nest.matches(deep + ")"));
    // Ambiguous alternatives and overlapping repetitions still match exactly their language.
    GrammarMatcher amb("root ::= (\"a\" | \"a\" | \"aa\")* \"a\"* \"b\"");
    CHECK(amb.matches(std::string(40, 'a') + "b"));
    CHECK_FALSE(amb.matches(std::string(40, 'a') + "bb"));
}

TEST_CASE("random walks produce strings the grammar matches", "[grammar][matcher]") {
    GrammarMatcher m(R"(
root ::= item ("," item){0,3}
item ::= [a-c]{1,3} | "\"" [^"\n]* "\""
)");
    std::mt19937 rng(7);
    int produced = 0;
    for (int i = 0; i < 50; ++i) {
        auto s = grammar_test::random_walk(m, rng, 400);
        if (!s) continue;
        ++produced;
        CHECK(m.matches(*s));
    }
    CHECK(produced > 40);
}
