// DRY: repeat detection, sequence breakers given as text, and the penalty formula.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/sampling/dry.h"
#include "sampling_test_util.h"

using namespace engine;
using namespace sampling_test;

namespace {

// Token pieces: a b c \n d x: e
const std::vector<std::string> kPieces = {"a", "b", "c", "\n", "d", "x:", "e"};
constexpr Token A = 0, B = 1, C = 2, NL = 3, D = 4, XCOLON = 5, E = 6;

// multiplier 1, base 2, allowed length 2: a repeat of length L costs 2^(L - 2).
DrySampler make_dry(const std::vector<std::string>& breakers) {
    return DrySampler(1.0f, 2.0f, 2, 100, breakers, kPieces);
}

std::vector<float> penalties_after(DrySampler& dry, const std::vector<Token>& history) {
    for (Token t : history) dry.accept(t);
    auto cur = candidates(std::vector<float>(kPieces.size(), 0.0f));
    dry.apply(cur);
    std::vector<float> out;
    for (const auto& td : cur.data) out.push_back(-td.logit);
    return out;
}

}  // namespace

TEST_CASE("DRY penalizes the token that would extend a repeat", "[sampling][dry]") {
    // a b c d a b c: choosing d would repeat "a b c d" (a repeat of length 3 so far) -> 2^(3-2) = 2.
    auto dry = make_dry({});
    const auto pen = penalties_after(dry, {A, B, C, D, A, B, C});
    CHECK(pen[D] == Approx(2.0f));
    CHECK(pen[A] == 0.0f);
    CHECK(pen[B] == 0.0f);
    CHECK(pen[C] == 0.0f);
}

TEST_CASE("DRY repeats shorter than allowed_length are free", "[sampling][dry]") {
    auto dry = make_dry({});
    const auto pen = penalties_after(dry, {A, B, C, A});  // "a" repeats: length 1 < 2
    for (float p : pen) CHECK(p == 0.0f);
}

TEST_CASE("DRY repeat does not reach back across a sequence breaker", "[sampling][dry]") {
    // a \n b c d a \n b c: "a \n b c" repeats (length 4), but the newest \n caps the reach at 2 tokens.
    const std::vector<Token> history = {A, NL, B, C, D, A, NL, B, C};
    auto plain = make_dry({});
    CHECK(penalties_after(plain, history)[D] == Approx(4.0f));  // 2^(4-2)
    auto broken = make_dry({"\n"});
    CHECK(penalties_after(broken, history)[D] == Approx(1.0f));  // 2^(2-2)
}

TEST_CASE("DRY never penalizes a one-token breaker", "[sampling][dry]") {
    // a b x: a b: "x:" would extend "a b" (length 2). It contains ':' so with ':' as a breaker it is exempt.
    const std::vector<Token> history = {A, B, XCOLON, A, B};
    auto plain = make_dry({});
    CHECK(penalties_after(plain, history)[XCOLON] == Approx(1.0f));
    auto broken = make_dry({":"});
    CHECK(penalties_after(broken, history)[XCOLON] == 0.0f);
}

TEST_CASE("DRY breakers that span several tokens", "[sampling][dry]") {
    // c d a b c d a: without breakers, b would extend "c d a" (length 3) -> 2.
    const std::vector<Token> history = {C, D, A, B, C, D, A};
    auto plain = make_dry({});
    CHECK(penalties_after(plain, history)[B] == Approx(2.0f));
    // "c" alone breaks two tokens back: reach 2 -> 2^0.
    auto one = make_dry({"c"});
    CHECK(penalties_after(one, history)[B] == Approx(1.0f));
    // "cd" is the tokens c, d: it ends one token back, reach 1 < allowed length -> no penalty at all.
    auto two = make_dry({"cd"});
    CHECK(penalties_after(two, history)[B] == 0.0f);
}

TEST_CASE("DRY inactive settings, reset and clone", "[sampling][dry]") {
    DrySampler off(0.0f, 2.0f, 2, 100, {}, kPieces);
    CHECK_FALSE(off.active());
    CHECK(penalties_after(off, {A, B, C, D, A, B, C})[D] == 0.0f);

    auto dry = make_dry({});
    for (Token t : {A, B, C, D, A, B, C}) dry.accept(t);
    auto copy = dry.clone();
    dry.reset();
    auto cur = candidates(std::vector<float>(kPieces.size(), 0.0f));
    dry.apply(cur);
    CHECK(cur.data[D].logit == 0.0f);
    copy->apply(cur);
    CHECK(cur.data[D].logit == Approx(-2.0f));
}

TEST_CASE("DRY window: only the last n tokens count", "[sampling][dry]") {
    DrySampler dry(1.0f, 2.0f, 2, 4, {}, kPieces);
    const auto pen = penalties_after(dry, {A, B, C, D, E, A, B, C});  // window: e a b c
    CHECK(pen[D] == 0.0f);
}
