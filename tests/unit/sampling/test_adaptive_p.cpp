// adaptive-p: a 20-step trace re-derived here in double arithmetic (EMA, adapted target, transform and the
// seeded draw), plus the negative-target, clamp, ban, clone and reset behaviour.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/sampling/adaptive_p.h"
#include "sampling_test_util.h"

using namespace engine;
using namespace sampling_test;

namespace {

const std::vector<float> kLogits = {2.0f, 1.5f, 1.0f, 0.5f, 0.0f, -1.0f};

// The reference model of BRIEF.md's adaptive-p, in double.
struct Reference {
    double target, decay, weighted_sum, total_weight;

    Reference(double t, double d)
        : target(t), decay(d), weighted_sum(t / (1 - d)), total_weight(1 / (1 - d)) {}

    double adapted() const { return std::clamp(2 * target - weighted_sum / total_weight, 0.0, 1.0); }

    std::vector<double> transformed(const std::vector<double>& p) const {
        std::vector<double> logits;
        for (double pi : p) {
            const double d = std::abs(pi - adapted()) / 0.3;
            logits.push_back(5 - 10 * d * d / (1 + d));
        }
        return softmax(logits);
    }

    void update(double p_picked) {
        weighted_sum = p_picked + decay * weighted_sum;
        total_weight = 1 + decay * total_weight;
    }
};

}  // namespace

TEST_CASE("adaptive-p 20-step trace matches the independently computed one", "[sampling][adaptive_p]") {
    const double target = 0.3, decay = 0.9;
    const uint32_t seed = 1234;
    AdaptivePSampler sampler(static_cast<float>(target), static_cast<float>(decay), seed);
    Reference ref(target, decay);
    std::mt19937 rng(seed);  // the reference replays the draws
    const auto p_orig = softmax(std::vector<double>(kLogits.begin(), kLogits.end()));

    CHECK(sampler.weighted_sum() == Approx(3.0));  // 0.3 / (1 - 0.9)
    CHECK(sampler.total_weight() == Approx(10.0));

    std::vector<Token> picks;
    for (int step = 0; step < 20; ++step) {
        INFO("step " << step);
        CHECK(sampler.adapted_target() == Approx(ref.adapted()).margin(1e-5));
        const auto q = ref.transformed(p_orig);
        std::discrete_distribution<size_t> draw(q.begin(), q.end());
        const size_t expect = draw(rng);

        auto cur = candidates(kLogits);
        sampler.apply(cur);
        for (size_t i = 0; i < q.size(); ++i) CHECK(cur.data[i].p == Approx(q[i]).margin(1e-5));
        REQUIRE(cur.selected == static_cast<int64_t>(expect));

        sampler.accept(cur.data[expect].id);
        ref.update(p_orig[expect]);
        CHECK(sampler.weighted_sum() == Approx(ref.weighted_sum).epsilon(1e-4));
        CHECK(sampler.total_weight() == Approx(ref.total_weight).epsilon(1e-4));
        picks.push_back(cur.data[expect].id);
    }
    // The trace is not degenerate: the target steers it off the most likely token.
    CHECK(std::count(picks.begin(), picks.end(), 0) < 20);
}

TEST_CASE("adaptive-p only feeds the EMA with the token it picked", "[sampling][adaptive_p]") {
    AdaptivePSampler sampler(0.3f, 0.9f, 5);
    auto cur = candidates(kLogits);
    sampler.apply(cur);
    const Token picked = cur.data[static_cast<size_t>(cur.selected)].id;
    sampler.accept(picked == 0 ? 1 : 0);  // some other token (e.g. a prompt token)
    CHECK(sampler.weighted_sum() == Approx(3.0));
    CHECK(sampler.total_weight() == Approx(10.0));
}

TEST_CASE("adaptive-p decay is clamped to [0, 0.99]", "[sampling][adaptive_p]") {
    AdaptivePSampler high(0.5f, 5.0f, 1);
    CHECK(high.decay() == 0.99f);
    CHECK(high.total_weight() == Approx(100.0));
    AdaptivePSampler low(0.5f, -1.0f, 1);
    CHECK(low.decay() == 0.0f);
    CHECK(low.weighted_sum() == Approx(0.5));
}

TEST_CASE("adaptive-p with a negative target samples the distribution unchanged", "[sampling][adaptive_p]") {
    AdaptivePSampler sampler(-1.0f, 0.9f, 77);
    std::mt19937 rng(77);
    const auto p = softmax(std::vector<double>(kLogits.begin(), kLogits.end()));
    for (int i = 0; i < 20; ++i) {
        std::discrete_distribution<size_t> draw(p.begin(), p.end());
        auto cur = candidates(kLogits);
        sampler.apply(cur);
        REQUIRE(cur.selected == static_cast<int64_t>(draw(rng)));
        CHECK(cur.data[0].logit == kLogits[0]);
        CHECK(cur.data[0].p == Approx(p[0]));
    }
}

TEST_CASE("adaptive-p keeps banned candidates banned", "[sampling][adaptive_p]") {
    AdaptivePSampler sampler(0.0f, 0.5f, 3);  // aims at improbable tokens
    for (int i = 0; i < 50; ++i) {
        auto cur = candidates({1.0f, kNegInf, 0.5f, kNegInf});
        sampler.apply(cur);
        const Token t = cur.data[static_cast<size_t>(cur.selected)].id;
        REQUIRE((t == 0 || t == 2));
        sampler.accept(t);
    }
}

TEST_CASE("adaptive-p clone continues identically and reset restores the start", "[sampling][adaptive_p]") {
    AdaptivePSampler sampler(0.4f, 0.8f, 99);
    auto step = [](Sampler& s) {
        auto cur = candidates(kLogits);
        s.apply(cur);
        const Token t = cur.data[static_cast<size_t>(cur.selected)].id;
        s.accept(t);
        return t;
    };
    std::vector<Token> first;
    for (int i = 0; i < 10; ++i) first.push_back(step(sampler));
    auto copy = sampler.clone();
    auto& copied = static_cast<AdaptivePSampler&>(*copy);
    CHECK(copied.weighted_sum() == sampler.weighted_sum());
    for (int i = 0; i < 10; ++i) REQUIRE(step(sampler) == step(*copy));

    sampler.reset();
    CHECK(sampler.weighted_sum() == Approx(2.0));  // 0.4 / 0.2
    CHECK(sampler.total_weight() == Approx(5.0));
    std::vector<Token> again;
    for (int i = 0; i < 10; ++i) again.push_back(step(sampler));
    CHECK(again == first);
}
