// Repeat / frequency / presence penalties and logit_bias.
#include <catch2/catch.hpp>

#include "engine/sampling/logit_bias.h"
#include "engine/sampling/penalties.h"
#include "sampling_test_util.h"

using namespace engine;
using namespace sampling_test;

TEST_CASE("penalties with repeated tokens", "[sampling][penalties]") {
    PenaltiesSampler pen(64, 2.0f, 0.5f, 1.0f);
    for (Token t : {0, 1, 0}) pen.accept(t);
    CHECK(pen.count(0) == 2);
    CHECK(pen.count(1) == 1);
    auto cur = candidates({2.0f, -2.0f, 1.0f, 0.5f});
    pen.apply(cur);
    // token 0: 2 / 2 - (2 * 0.5 + 1) = -1; token 1: -2 * 2 - (1 * 0.5 + 1) = -5.5; others untouched
    CHECK(cur.data[0].logit == Approx(-1.0f));
    CHECK(cur.data[1].logit == Approx(-5.5f));
    CHECK(cur.data[2].logit == 1.0f);
    CHECK(cur.data[3].logit == 0.5f);
}

TEST_CASE("penalties find tokens in reordered candidates", "[sampling][penalties]") {
    PenaltiesSampler pen(64, 2.0f, 0.0f, 0.0f);
    pen.accept(2);
    TokenDataArray cur;
    cur.data = {{3, 1.0f, 0.0f}, {2, 4.0f, 0.0f}, {0, 1.0f, 0.0f}};
    pen.apply(cur);
    CHECK(cur.data[1].logit == 2.0f);
    CHECK(cur.data[0].logit == 1.0f);
}

TEST_CASE("penalties only look at the last n tokens", "[sampling][penalties]") {
    PenaltiesSampler pen(2, 1.0f, 1.0f, 0.0f);
    for (Token t : {0, 1, 2}) pen.accept(t);  // 0 has left the window
    CHECK(pen.count(0) == 0);
    auto cur = candidates({0.0f, 0.0f, 0.0f});
    pen.apply(cur);
    CHECK(cur.data[0].logit == 0.0f);
    CHECK(cur.data[1].logit == -1.0f);
    CHECK(cur.data[2].logit == -1.0f);
}

TEST_CASE("penalties: last_n 0 and neutral values do nothing", "[sampling][penalties]") {
    PenaltiesSampler off(0, 2.0f, 1.0f, 1.0f);
    off.accept(0);
    PenaltiesSampler neutral(64, 1.0f, 0.0f, 0.0f);
    neutral.accept(0);
    auto cur = candidates({3.0f, 1.0f});
    off.apply(cur);
    neutral.apply(cur);
    CHECK(cur.data[0].logit == 3.0f);
}

TEST_CASE("penalties reset and clone", "[sampling][penalties]") {
    PenaltiesSampler pen(8, 1.0f, 1.0f, 0.0f);
    pen.accept(1);
    pen.accept(1);
    auto copy = pen.clone();
    pen.reset();
    CHECK(pen.count(1) == 0);
    auto cur = candidates({0.0f, 0.0f});
    copy->apply(cur);
    CHECK(cur.data[1].logit == -2.0f);
}

TEST_CASE("logit_bias adds biases and -inf bans", "[sampling][logit_bias]") {
    LogitBiasSampler bias({{0, 1.5f}, {2, kNegInf}});
    auto cur = candidates({1.0f, 1.0f, 5.0f});
    bias.apply(cur);
    CHECK(cur.data[0].logit == 2.5f);
    CHECK(cur.data[1].logit == 1.0f);
    CHECK(cur.data[2].logit == kNegInf);

    // Candidates not at index == id are found by search.
    TokenDataArray shuffled;
    shuffled.data = {{2, 5.0f, 0.0f}, {0, 1.0f, 0.0f}};
    bias.apply(shuffled);
    CHECK(shuffled.data[0].logit == kNegInf);
    CHECK(shuffled.data[1].logit == 2.5f);
}
