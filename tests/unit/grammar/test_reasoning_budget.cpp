// ReasoningBudget: counts the tokens inside <think> ... </think> and, once the budget is spent, allows
// only the closing tokens, in order; replies that do not reason, blocks closed in time and the request's
// own constraint are left alone.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "engine/grammar/grammar.h"
#include "engine/grammar/reasoning_budget.h"

using engine::ReasoningBudget;
using engine::Token;

namespace {

// 0 "<think>", 1 "</think>", 2 "\n", 3 "a", 4 "b", 5 " ", 6 "<thi", 7 "nk>", 8 "</", 9 "think>", 10 EOS ("")
std::shared_ptr<const engine::GrammarVocab> vocab() {
    static auto v = std::make_shared<const engine::GrammarVocab>(
        std::vector<std::string>{"<think>", "</think>", "\n", "a", "b", " ", "<thi", "nk>", "</", "think>",
                                 ""},
        std::vector<Token>{10});
    return v;
}

const std::vector<Token> kClose = {2, 1, 2};  // "\n</think>\n"

engine::TokenDataArray all_tokens() {
    engine::TokenDataArray cur;
    for (Token t = 0; t < 11; ++t) cur.data.push_back({t, 0.0f, 0.0f});
    return cur;
}

std::vector<Token> allowed(engine::TokenConstraint& c) {
    auto cur = all_tokens();
    c.apply(cur);
    std::vector<Token> out;
    for (const auto& d : cur.data)
        if (std::isfinite(d.logit)) out.push_back(d.id);
    for (Token t = 0; t < 11; ++t) CHECK(c.allows(t) == (std::find(out.begin(), out.end(), t) != out.end()));
    return out;
}

const std::vector<Token> kAll = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

}  // namespace

TEST_CASE("a block the prompt opened is closed for the reply once the budget is spent",
          "[grammar][reasoning]") {
    ReasoningBudget b(3, true, vocab(), kClose, nullptr);
    for (Token t : {3, 4, 3}) {
        CHECK(allowed(b) == kAll);
        b.accept(t);
    }
    CHECK(b.spent() == 3);
    for (Token t : kClose) {
        CHECK(allowed(b) == std::vector<Token>{t});  // only the next closing token, not even EOS
        b.accept(t);
    }
    CHECK(allowed(b) == kAll);  // after the block nothing is limited
    for (int i = 0; i < 10; ++i) b.accept(3);
    CHECK(allowed(b) == kAll);
}

TEST_CASE("a reply that opens the block itself is limited from the tag on, one that does not reason is not",
          "[grammar][reasoning]") {
    ReasoningBudget b(2, false, vocab(), kClose, nullptr);
    b.accept(2);  // leading whitespace
    b.accept(6);  // "<thi": maybe the tag
    b.accept(7);  // "nk>": it is
    b.accept(3);
    CHECK(allowed(b) == kAll);
    b.accept(4);
    CHECK(allowed(b) == std::vector<Token>{2});

    ReasoningBudget plain(1, false, vocab(), kClose, nullptr);
    plain.accept(3);  // "a": not a reasoning reply
    for (int i = 0; i < 5; ++i) plain.accept(4);
    CHECK(allowed(plain) == kAll);
    CHECK(plain.spent() == 0);
}

TEST_CASE("a block closed within the budget (also across pieces) ends the limit", "[grammar][reasoning]") {
    ReasoningBudget b(4, true, vocab(), kClose, nullptr);
    b.accept(3);
    b.accept(8);  // "</"
    b.accept(9);  // "think>"
    for (int i = 0; i < 10; ++i) b.accept(4);
    CHECK(allowed(b) == kAll);
}

TEST_CASE("reset and clone keep the budget's state apart, the request's constraint still applies",
          "[grammar][reasoning]") {
    ReasoningBudget b(1, true, vocab(), kClose, nullptr);
    b.accept(3);
    auto copy = b.clone();
    CHECK(allowed(*copy) == std::vector<Token>{2});
    b.reset();
    CHECK(allowed(b) == kAll);
    CHECK(allowed(*copy) == std::vector<Token>{2});

    // Inside: a grammar allowing only "a" and "\n</think>\n" sequences; the budget forces the close.
    auto grammar =
        std::make_unique<engine::Grammar>("root ::= (\"a\" | \"\\n</think>\\n\")*", "root", vocab());
    ReasoningBudget g(2, true, vocab(), kClose, std::move(grammar));
    const auto first = allowed(g);
    CHECK(std::find(first.begin(), first.end(), 4) == first.end());  // "b" is the grammar's no
    g.accept(3);
    g.accept(3);
    CHECK(allowed(g) == std::vector<Token>{2});
}
