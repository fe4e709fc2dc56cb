// Control tokens (a chat format's [TOOL_CALLS], <｜tool▁calls▁begin｜>, ...) decode to no text, but a
// GrammarVocab may know them by a control text: token elements and `<text>` references name them, lazy
// triggers fire on them (as a trigger token or through their text), and character matches never allow
// them.
#include <catch2/catch.hpp>
#include <cmath>

#include "engine/grammar/grammar.h"

using namespace engine;

namespace {

// 0 EOS (""), 1 "<|tool_call|>" as a control token (no piece), 2 "{", 3 "}", 4 "a", 5 "h", 6 "<|", 7 "tool_call|>"
constexpr Token kCalls = 1;
std::shared_ptr<const GrammarVocab> vocab() {
    static auto v = std::make_shared<const GrammarVocab>(
        std::vector<std::string>{"", "", "{", "}", "a", "h", "<|", "tool_call|>"}, std::vector<Token>{0},
        std::vector<std::string>{"", "<|tool_call|>", "", "", "", "", "", ""});
    return v;
}

std::vector<Token> allowed(Grammar& g) {
    TokenDataArray cur;
    for (Token t = 0; t < 8; ++t) cur.data.push_back({t, 0.0f, 0.0f});
    g.apply(cur);
    std::vector<Token> out;
    for (const auto& c : cur.data)
        if (!std::isinf(c.logit)) out.push_back(c.id);
    return out;
}

const char* const kCall = R"(root ::= ( <[1]> | "<|tool_call|>" ) "{" "a"* "}")";

}  // namespace

TEST_CASE("a control token's text names it, its piece stays empty", "[grammar][control]") {
    CHECK(vocab()->piece(kCalls).empty());
    CHECK(vocab()->text(kCalls) == "<|tool_call|>");
    CHECK(vocab()->text(2) == "{");
    REQUIRE(vocab()->find_piece("<|tool_call|>"));
    CHECK(*vocab()->find_piece("<|tool_call|>") == kCalls);
    CHECK_THROWS_AS(GrammarVocab({"a", "b"}, {}, {"x"}), std::invalid_argument);
}

TEST_CASE("a grammar takes a control token where a token element names it", "[grammar][control]") {
    Grammar g(kCall, "root", vocab());
    CHECK(allowed(g) == std::vector<Token>{kCalls, 6});  // the token, or the text spelled out
    g.accept(kCalls);
    CHECK(allowed(g) == std::vector<Token>{2});
    for (Token t : {2, 4, 3}) g.accept(t);
    CHECK(g.complete());

    Grammar named(R"(root ::= <|tool_call|> "{" "}")", "root", vocab());
    CHECK(named.allows(kCalls));
    CHECK_FALSE(named.allows(6));

    // Characters alone never match a control token: it has none.
    Grammar chars(R"(root ::= "<|tool_call|>" "{" "}")", "root", vocab());
    CHECK(allowed(chars) == std::vector<Token>{6});
}

TEST_CASE("a lazy grammar wakes on a control token, as a trigger token or by its text", "[grammar][control][lazy]") {
    for (const bool by_token : {true, false}) {
        INFO("trigger " << (by_token ? "token" : "word"));
        GrammarTriggers triggers;
        if (by_token) triggers.tokens = {kCalls};
        triggers.words = {"<|tool_call|>"};
        Grammar g(kCall, "root", vocab(), triggers);
        g.accept(5);  // "h"
        CHECK_FALSE(g.active());
        g.accept(kCalls);
        CHECK(g.active());
        CHECK(allowed(g) == std::vector<Token>{2});  // the token itself was the grammar's start
        for (Token t : {2, 4, 3}) g.accept(t);
        CHECK(g.complete());
    }
    // The text spelled out in ordinary tokens triggers the same grammar.
    Grammar g(kCall, "root", vocab(), GrammarTriggers{{"<|tool_call|>"}, {}, {}});
    g.accept(6);
    g.accept(7);
    CHECK(g.active());
    CHECK(allowed(g) == std::vector<Token>{2});
}
