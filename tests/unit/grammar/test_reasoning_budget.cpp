// ReasoningBudget: counts the tokens inside <think> ... </think> (or the template's tags) and, once the
// budget is spent, allows only the forced tokens (the budget message, then the closing tag), in order,
// after the UTF-8 character in progress is whole; replies that do not reason, blocks closed in time and
// the request's own constraint are left alone.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <stdexcept>

#include "engine/grammar/grammar.h"
#include "engine/grammar/reasoning_budget.h"

using engine::ReasoningBudget;
using engine::Token;

namespace {

// 0 "<think>", 1 "</think>", 2 "\n", 3 "a", 4 "b", 5 " ", 6 "<thi", 7 "nk>", 8 "</", 9 "think>", 10 EOS (""),
// 11 and 12 the two bytes of "é", 13 "[THINK]", 14 "[/THINK]"
constexpr Token kVocabSize = 15;

std::shared_ptr<const engine::GrammarVocab> vocab() {
    static auto v = std::make_shared<const engine::GrammarVocab>(
        std::vector<std::string>{"<think>", "</think>", "\n", "a", "b", " ", "<thi", "nk>", "</", "think>", "",
                                 "\xC3", "\xA9", "[THINK]", "[/THINK]"},
        std::vector<Token>{10});
    return v;
}

const std::vector<Token> kClose = {2, 1, 2};  // "\n</think>\n"

engine::TokenDataArray all_tokens() {
    engine::TokenDataArray cur;
    for (Token t = 0; t < kVocabSize; ++t) cur.data.push_back({t, 0.0f, 0.0f});
    return cur;
}

std::vector<Token> allowed(engine::TokenConstraint& c) {
    auto cur = all_tokens();
    c.apply(cur);
    std::vector<Token> out;
    for (const auto& d : cur.data)
        if (std::isfinite(d.logit)) out.push_back(d.id);
    for (Token t = 0; t < kVocabSize; ++t) CHECK(c.allows(t) == (std::find(out.begin(), out.end(), t) != out.end()));
    return out;
}

const std::vector<Token> kAll = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};

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

TEST_CASE("the budget message is forced before the closing tag, and the reply goes on after it",
          "[grammar][reasoning]") {
    const std::vector<Token> forced = {3, 4, 2, 1, 2};  // "ab" then "\n</think>\n"
    ReasoningBudget b(2, false, vocab(), forced, nullptr);
    b.accept(0);  // the reply opens the block
    b.accept(4);
    CHECK(allowed(b) == kAll);
    b.accept(4);
    CHECK(b.spent() == 2);
    for (Token t : forced) {
        CHECK(allowed(b) == std::vector<Token>{t});
        b.accept(t);
    }
    CHECK(b.spent() == 2);  // the forced tokens are not reasoning the model spent
    CHECK(allowed(b) == kAll);
}

TEST_CASE("a budget that runs out inside a UTF-8 character waits for the character to end",
          "[grammar][reasoning]") {
    ReasoningBudget b(2, true, vocab(), kClose, nullptr);
    b.accept(3);
    b.accept(11);  // the first byte of "é": the budget is spent, but the character is not whole
    CHECK(allowed(b) == kAll);
    b.accept(12);
    CHECK(b.spent() == 2);
    CHECK(allowed(b) == std::vector<Token>{2});

    CHECK(engine::utf8_complete(""));
    CHECK(engine::utf8_complete("ab"));
    CHECK(engine::utf8_complete("a\xC3\xA9"));
    CHECK_FALSE(engine::utf8_complete("a\xC3"));
    CHECK_FALSE(engine::utf8_complete("\xE2\x82"));
    CHECK(engine::utf8_complete("\xE2\x82\xAC"));
    CHECK_FALSE(engine::utf8_complete("\xF0\x9F\x98"));
    CHECK(engine::utf8_complete("\xF0\x9F\x98\x80"));
}

TEST_CASE("the template's own tags open and close the limited block", "[grammar][reasoning]") {
    const ReasoningBudget::Tags tags{"[THINK]", "[/THINK]"};
    ReasoningBudget b(1, false, vocab(), {14}, nullptr, tags);
    b.accept(13);
    b.accept(3);
    CHECK(allowed(b) == std::vector<Token>{14});

    ReasoningBudget closed(3, false, vocab(), {14}, nullptr, tags);
    closed.accept(13);
    closed.accept(3);
    closed.accept(14);  // closed within the budget
    for (int i = 0; i < 5; ++i) closed.accept(3);
    CHECK(allowed(closed) == kAll);

    ReasoningBudget other(1, false, vocab(), {14}, nullptr, tags);
    other.accept(0);  // "<think>" is not this template's tag: the reply does not reason
    for (int i = 0; i < 5; ++i) other.accept(3);
    CHECK(allowed(other) == kAll);
    CHECK(other.spent() == 0);

    CHECK_THROWS_AS(ReasoningBudget(1, false, vocab(), {14}, nullptr, ReasoningBudget::Tags{"", "x"}),
                    std::invalid_argument);
}

TEST_CASE("the end signal closes an open block from the next token, waiting out a UTF-8 character",
          "[grammar][reasoning]") {
    auto end = std::make_shared<std::atomic<bool>>(false);
    ReasoningBudget b(ReasoningBudget::kUnlimited, true, vocab(), kClose, nullptr, {}, end);
    for (int i = 0; i < 50; ++i) {
        CHECK(allowed(b) == kAll);  // no budget: only the signal ends the block
        b.accept(3);
    }
    b.accept(11);  // the first byte of "é"
    end->store(true);
    CHECK(allowed(b) == kAll);  // the character is not whole yet
    b.accept(12);
    auto copy = b.clone();  // a clone shares the signal and the state
    for (Token t : kClose) {
        CHECK(allowed(b) == std::vector<Token>{t});
        CHECK(allowed(*copy) == std::vector<Token>{t});
        b.accept(t);
        copy->accept(t);
    }
    CHECK(allowed(b) == kAll);
    CHECK(b.spent() == 52);
}

TEST_CASE("an end signal that comes before the block opens closes it as soon as it opens, and never limits "
          "a reply that does not reason",
          "[grammar][reasoning]") {
    auto end = std::make_shared<std::atomic<bool>>(true);
    ReasoningBudget b(ReasoningBudget::kUnlimited, false, vocab(), kClose, nullptr, {}, end);
    CHECK(allowed(b) == kAll);
    b.accept(0);  // "<think>"
    CHECK(allowed(b) == std::vector<Token>{2});

    ReasoningBudget plain(ReasoningBudget::kUnlimited, false, vocab(), kClose, nullptr, {}, end);
    plain.accept(3);
    CHECK(allowed(plain) == kAll);
    plain.accept(0);  // a tag later in a reply that did not start with one is text
    CHECK(allowed(plain) == kAll);

    ReasoningBudget unset(ReasoningBudget::kUnlimited, true, vocab(), kClose, nullptr, {},
                          std::make_shared<std::atomic<bool>>(false));
    for (int i = 0; i < 20; ++i) unset.accept(4);
    CHECK(allowed(unset) == kAll);
}
