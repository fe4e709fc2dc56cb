// XTC and temperature (plain, greedy masking and dynamic).
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/sampling/temperature.h"
#include "engine/sampling/xtc.h"
#include "sampling_test_util.h"

using namespace engine;
using namespace sampling_test;
using Ids = std::vector<Token>;

TEST_CASE("XTC with probability 1 removes all top choices but the least likely", "[sampling][xtc]") {
    // p = 0.4 0.3 0.2 0.06 0.04; at or above 0.1: 0.4, 0.3, 0.2 -> keep 0.2 and below.
    auto cur = candidates(logits_of({0.06, 0.4, 0.04, 0.2, 0.3}));
    XtcSampler(1.0f, 0.1f, 0, 7).apply(cur);
    CHECK(ids(cur) == Ids{3, 0, 2});
}

TEST_CASE("XTC does nothing when it cannot or should not act", "[sampling][xtc]") {
    const auto logits = logits_of({0.06, 0.4, 0.04, 0.2, 0.3});
    SECTION("probability 0") {
        auto cur = candidates(logits);
        XtcSampler(0.0f, 0.1f, 0, 7).apply(cur);
        CHECK(cur.data.size() == 5);
    }
    SECTION("threshold above 0.5") {
        auto cur = candidates(logits);
        XtcSampler(1.0f, 0.6f, 0, 7).apply(cur);
        CHECK(cur.data.size() == 5);
    }
    SECTION("only one candidate above the threshold") {
        auto cur = candidates(logits);
        XtcSampler(1.0f, 0.35f, 0, 7).apply(cur);
        CHECK(cur.data.size() == 5);
    }
    SECTION("min_keep would be violated") {
        auto cur = candidates(logits);
        XtcSampler(1.0f, 0.1f, 4, 7).apply(cur);  // would leave 3
        CHECK(cur.data.size() == 5);
    }
}

TEST_CASE("XTC draws from its own seeded generator", "[sampling][xtc]") {
    const auto logits = logits_of({0.06, 0.4, 0.04, 0.2, 0.3});
    auto run = [&](XtcSampler& xtc) {
        std::vector<size_t> sizes;
        for (int i = 0; i < 64; ++i) {
            auto cur = candidates(logits);
            xtc.apply(cur);
            sizes.push_back(cur.data.size());
        }
        return sizes;
    };
    XtcSampler a(0.5f, 0.1f, 0, 1234);
    XtcSampler b(0.5f, 0.1f, 0, 1234);
    const auto first = run(a);
    CHECK(first == run(b));
    CHECK(std::count(first.begin(), first.end(), size_t{3}) > 10);  // acted sometimes
    CHECK(std::count(first.begin(), first.end(), size_t{5}) > 10);  // and sometimes not
    a.reset();
    CHECK(run(a) == first);
}

TEST_CASE("temperature scales logits", "[sampling][temperature]") {
    auto cur = candidates({1.0f, 2.0f, -3.0f});
    TemperatureSampler(0.5f).apply(cur);
    CHECK(cur.data[0].logit == 2.0f);
    CHECK(cur.data[1].logit == 4.0f);
    CHECK(cur.data[2].logit == -6.0f);
}

TEST_CASE("temperature 0 keeps only the first best candidate", "[sampling][temperature]") {
    auto cur = candidates({3.0f, 1.0f, 3.0f});
    TemperatureSampler(0.0f).apply(cur);
    CHECK(cur.data[0].logit == 3.0f);
    CHECK(cur.data[1].logit == kNegInf);
    CHECK(cur.data[2].logit == kNegInf);
}

TEST_CASE("dynamic temperature follows the normalized entropy", "[sampling][temperature]") {
    // temp 1 +- 0.5, exponent 1: T = 0.5 + 1.0 * H / ln(3).
    const std::vector<double> logits = {1.0, 3.0, 2.0};
    const auto p = softmax(logits);
    double entropy = 0.0;
    for (double q : p) entropy -= q * std::log(q);
    const double t = 0.5 + entropy / std::log(3.0);

    auto cur = candidates({1.0f, 3.0f, 2.0f});
    TemperatureSampler(1.0f, 0.5f, 1.0f).apply(cur);
    REQUIRE(ids(cur) == Ids{1, 2, 0});  // sorted by the entropy step
    CHECK(cur.data[0].logit == Approx(3.0 / t));
    CHECK(cur.data[2].logit == Approx(1.0 / t));
    const auto q = softmax({3.0 / t, 2.0 / t, 1.0 / t});
    CHECK(cur.data[0].p == Approx(q[0]));
    CHECK(cur.data[1].p == Approx(q[1]));
}
