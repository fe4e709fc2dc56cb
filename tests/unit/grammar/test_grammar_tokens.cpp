// Grammar as a TokenConstraint on a synthetic vocabulary: apply()/allows() agree with a byte-level
// reference, EOG only when complete, UTF-8 split across tokens, clone/reset, token references.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_error.h"
#include "engine/grammar/grammar_matcher.h"
#include "grammar_test_util.h"

using engine::Grammar;
using engine::GrammarMatcher;
using engine::Token;
using engine::TokenDataArray;

namespace {

const std::vector<std::string>& pieces() {
    static const auto p = grammar_test::synthetic_pieces();
    return p;
}
const std::vector<Token> kEog = {0, 1};

Token id_of(const std::string& piece) {
    auto it = std::find(pieces().begin() + 3, pieces().end(), piece);
    REQUIRE(it != pieces().end());
    return Token(it - pieces().begin());
}

TokenDataArray candidates(const std::vector<Token>& ids) {
    TokenDataArray cur;
    for (Token t : ids) cur.data.push_back({t, 1.0f, 0.0f});
    return cur;
}

std::vector<Token> all_ids() {
    std::vector<Token> ids(pieces().size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = Token(i);
    return ids;
}

std::vector<Token> allowed_by_apply(Grammar& g, const std::vector<Token>& ids) {
    auto cur = candidates(ids);
    g.apply(cur);
    std::vector<Token> out;
    for (const auto& c : cur.data) {
        if (!std::isinf(c.logit)) out.push_back(c.id);
    }
    return out;
}

// Reference: a token may follow `text` iff text + piece is a prefix of the language; EOG iff text
// is complete; empty pieces never.
std::vector<Token> allowed_by_reference(const GrammarMatcher& m, const std::string& text) {
    std::vector<Token> out;
    for (size_t i = 0; i < pieces().size(); ++i) {
        const bool eog = i == 0 || i == 1;
        const bool ok = eog ? m.matches(text) : !pieces()[i].empty() && m.accepts_prefix(text + pieces()[i]);
        if (ok) out.push_back(Token(i));
    }
    return out;
}

void check_agreement(const std::string& gbnf, uint32_t seed) {
    INFO("grammar: " << gbnf << " seed " << seed);
    Grammar g(gbnf, "root", pieces(), kEog);
    GrammarMatcher ref(gbnf);
    std::mt19937 rng(seed);
    std::string text;
    for (int step = 0; step < 60; ++step) {
        INFO("text so far: '" << text << "'");
        const auto expected = allowed_by_reference(ref, text);
        REQUIRE(allowed_by_apply(g, all_ids()) == expected);
        REQUIRE(allowed_by_apply(g, all_ids()) == expected);  // second call: cached mask
        for (size_t i = 0; i < pieces().size(); ++i) {
            CHECK(g.allows(Token(i)) == std::binary_search(expected.begin(), expected.end(), Token(i)));
        }
        // A short candidate list takes the token-by-token path; it must agree too.
        std::vector<Token> few;
        for (int k = 0; k < 5; ++k) few.push_back(Token(rng() % pieces().size()));
        std::vector<Token> few_expected;
        for (Token t : few) {
            if (std::binary_search(expected.begin(), expected.end(), t)) few_expected.push_back(t);
        }
        CHECK(allowed_by_apply(g, few) == few_expected);
        if (expected.empty()) FAIL("no token allowed: the walk is stuck");
        const Token pick = expected[rng() % expected.size()];
        if (pick == 0 || pick == 1) {
            CHECK(g.complete());
            g.accept(pick);
            break;
        }
        g.accept(pick);
        text += pieces()[size_t(pick)];
    }
}

}  // namespace

TEST_CASE("apply and allows agree with a byte-level reference", "[grammar][tokens]") {
    const char* grammars[] = {
        R"G(root ::= expr
expr ::= term (("+" | "*") term)*
term ::= [0-9]+ ("." [0-9]+)? | "(" expr ")")G",
        R"G(root ::= "{" ws (pair ("," ws pair)*)? "}"
pair ::= "\"" [a-z]* "\"" ws ":" ws ("true" | "false" | "null" | [0-9]+) ws
ws ::= [ \t\n]*)G",
        R"G(root ::= ([a-c] | "é" | "中" | "文" | "😀")* "!")G",
        R"G(root ::= .{0,6})G",
        R"G(root ::= [^a-z]+ | "ab" "c"?)G",
    };
    uint32_t seed = 1;
    for (const char* g : grammars) {
        for (int i = 0; i < 4; ++i) check_agreement(g, seed++);
    }
}

TEST_CASE("end of generation only when the grammar is complete", "[grammar][tokens]") {
    Grammar g(R"(root ::= "ab" "c"?)", "root", pieces(), kEog);
    CHECK_FALSE(g.allows(0));
    CHECK_FALSE(g.complete());
    CHECK_THROWS_AS(g.accept(0), std::invalid_argument);
    g.accept(id_of("a"));
    CHECK_FALSE(g.allows(1));
    g.accept(id_of("b"));
    CHECK(g.complete());
    CHECK(g.allows(0));
    CHECK(g.allows(1));
    CHECK(g.allows(id_of("c")));
    g.accept(id_of("c"));
    auto after = allowed_by_apply(g, all_ids());
    CHECK(after == std::vector<Token>{0, 1});  // only EOG remains
    g.accept(0);                               // accepting EOG at a complete state is fine
    CHECK(g.complete());
}

TEST_CASE("tokens that split a UTF-8 character", "[grammar][tokens]") {
    Grammar g("root ::= \"\xC3\xA9\" \"\xE4\xB8\xAD\"+", "root", pieces(), kEog);  // é 中+
    auto names = [&](const std::vector<Token>& ids) {
        std::vector<std::string> out;
        for (Token t : ids) out.push_back(pieces()[size_t(t)]);
        std::sort(out.begin(), out.end());
        return out;
    };
    CHECK(names(allowed_by_apply(g, all_ids())) == std::vector<std::string>{"\xC3", "\xC3\xA9"});
    g.accept(id_of("\xC3"));  // pending: C3
    CHECK_FALSE(g.complete());
    CHECK(names(allowed_by_apply(g, all_ids())) == std::vector<std::string>{"\xA9"});
    g.accept(id_of("\xA9"));
    CHECK(names(allowed_by_apply(g, all_ids())) ==
          std::vector<std::string>{"\xE4", "\xE4\xB8", "\xE4\xB8\xAD"});
    g.accept(id_of("\xE4\xB8"));  // pending: E4 B8, one byte to go
    CHECK(names(allowed_by_apply(g, all_ids())) == std::vector<std::string>{"\xAD"});
    CHECK_FALSE(g.allows(0));
    g.accept(id_of("\xAD"));
    CHECK(g.complete());
    CHECK(g.allows(0));
    CHECK(g.allows(id_of("\xE4\xB8\xAD")));
}

TEST_CASE("invalid UTF-8 fragments are never allowed", "[grammar][tokens]") {
    Grammar g("root ::= .*", "root", pieces(), kEog);
    for (const char* bad : {"\xFF", "\xC0\x80", "\x80", "\xA9", "\xB8\xAD\xE6"}) {
        INFO("piece " << bad);
        CHECK_FALSE(g.allows(id_of(bad)));
    }
    CHECK(g.allows(id_of("\xC3")));
    CHECK(g.allows(id_of("\xE4\xB8")));
    CHECK_FALSE(g.allows(2));  // the empty control piece
    g.accept(id_of("\xF0\x9F"));
    CHECK(g.allows(id_of("\x98\x80")));
    CHECK_FALSE(g.allows(id_of("a")));
    CHECK_FALSE(g.allows(0));
}

TEST_CASE("accept rejects tokens the grammar forbids", "[grammar][tokens]") {
    Grammar g(R"(root ::= "ab")", "root", pieces(), kEog);
    CHECK_THROWS_AS(g.accept(id_of("b")), std::invalid_argument);
    CHECK_THROWS_AS(g.accept(Token(pieces().size())), std::invalid_argument);
    CHECK_THROWS_AS(g.accept(-1), std::invalid_argument);
    g.accept(id_of("ab"));  // the failed calls left the state alone
    CHECK(g.complete());
    // candidates outside the vocabulary are masked
    auto cur = candidates({-5, Token(pieces().size()), 0});
    g.apply(cur);
    CHECK(std::isinf(cur.data[0].logit));
    CHECK(std::isinf(cur.data[1].logit));
    CHECK_FALSE(std::isinf(cur.data[2].logit));
}

TEST_CASE("clone is independent and reset restarts", "[grammar][tokens]") {
    Grammar g(R"(root ::= "a" ("b" | "c") "a")", "root", pieces(), kEog);
    g.accept(id_of("a"));
    auto c = g.clone();
    g.accept(id_of("b"));
    CHECK(c->allows(id_of("c")));
    CHECK_FALSE(g.allows(id_of("c")));
    c->accept(id_of("c"));
    CHECK(c->allows(id_of("a")));
    g.reset();
    CHECK(g.allows(id_of("a")));
    CHECK_FALSE(g.allows(id_of("b")));
    c->reset();
    CHECK(c->allows(id_of("ab")));
}

TEST_CASE("token references match whole tokens", "[grammar][tokens]") {
    const Token ab = id_of("ab");
    const std::string gbnf =
        "root ::= \"x\" <[" + std::to_string(ab) + "]> !<[" + std::to_string(id_of("a")) + "]> <tool>";
    Grammar g(gbnf, "root", pieces(), kEog);
    g.accept(id_of("x"));
    CHECK(allowed_by_apply(g, all_ids()) == std::vector<Token>{ab});
    CHECK_FALSE(g.allows(id_of("a")));  // same text, but not the token
    g.accept(ab);
    CHECK_FALSE(g.allows(id_of("a")));
    CHECK_FALSE(g.allows(0));  // !<[a]> excludes EOG and empty pieces
    CHECK_FALSE(g.allows(2));
    CHECK(g.allows(id_of("b")));
    CHECK(g.allows(id_of("\xFF")));  // token elements do not look at the bytes
    g.accept(id_of("q"));
    CHECK(allowed_by_apply(g, all_ids()) == std::vector<Token>{id_of("<tool>")});
    g.accept(id_of("<tool>"));
    CHECK(g.complete());
    CHECK_THROWS_AS(Grammar("root ::= <[100000]>", "root", pieces(), kEog), engine::GrammarError);
    CHECK_THROWS_AS(Grammar("root ::= <nope>", "root", pieces(), kEog), engine::GrammarError);
}
