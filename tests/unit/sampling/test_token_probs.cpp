// Probabilities for the API: raw softmax (logprobs / n_probs) and post-sampling.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/sampling/sampler_chain.h"
#include "engine/sampling/token_probs.h"
#include "sampling_test_util.h"

using namespace engine;
using namespace sampling_test;

TEST_CASE("raw probs: softmax of the logits, top n most likely first", "[sampling][probs]") {
    const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 0.0f};
    const auto p = softmax({1.0, 2.0, 3.0, 0.0});
    const auto probs = probs_from_logits(logits.data(), 4, 1, 2);
    CHECK(probs.chosen.token == 1);
    CHECK(probs.chosen.prob == Approx(p[1]));
    CHECK(probs.chosen.logprob == Approx(std::log(p[1])));
    REQUIRE(probs.top.size() == 2);
    CHECK(probs.top[0].token == 2);
    CHECK(probs.top[0].prob == Approx(p[2]));
    CHECK(probs.top[1].token == 1);
}

TEST_CASE("raw probs: n beyond the vocabulary, ties, bans", "[sampling][probs]") {
    const std::vector<float> logits = {2.0f, kNegInf, 2.0f};
    const auto probs = probs_from_logits(logits.data(), 3, 1, 10);
    REQUIRE(probs.top.size() == 3);
    CHECK(probs.top[0].token == 0);  // ties: lower id first
    CHECK(probs.top[1].token == 2);
    CHECK(probs.top[0].prob == Approx(0.5));
    CHECK(probs.top[2].prob == 0.0f);
    CHECK(probs.chosen.prob == 0.0f);
    CHECK(probs.chosen.logprob == kNegInf);
    CHECK(probs_from_logits(logits.data(), 3, 0, 0).top.empty());
}

TEST_CASE("raw probs on a large vocabulary", "[sampling][probs]") {
    std::vector<float> logits(150000);
    for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>((i * 104729) % 150000) * 1e-4f;
    const auto probs = probs_from_logits(logits.data(), 150000, 0, 5);
    std::vector<size_t> order(logits.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                      [&](size_t a, size_t b) { return logits[a] > logits[b]; });
    for (size_t i = 0; i < 5; ++i) CHECK(probs.top[i].token == static_cast<Token>(order[i]));
    double sum = 0.0;
    for (float l : logits) sum += std::exp(double(l) - logits[order[0]]);
    CHECK(probs.top[0].prob == Approx(1.0 / sum));
}

TEST_CASE("post-sampling probs cover the survivors of the chain", "[sampling][probs]") {
    SamplingParams p;
    p.seed = 5;
    p.top_k = 2;
    p.temperature = 1.0f;
    p.min_p = 0.0f;
    p.top_p = 1.0f;
    SamplerChain chain(p, 4, 64, {});
    const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 0.0f};
    const Token t = chain.sample(logits.data());
    CHECK((t == 1 || t == 2));
    const auto post = chain.post_sampling_probs(t, 10);
    REQUIRE(post.top.size() == 2);
    const auto q = softmax({3.0, 2.0});
    CHECK(post.top[0].token == 2);
    CHECK(post.top[0].prob == Approx(q[0]));
    CHECK(post.top[1].prob == Approx(q[1]));
    CHECK(post.chosen.prob == Approx(t == 2 ? q[0] : q[1]));

    const auto raw = chain.raw_probs(logits.data(), t, 4);
    CHECK(raw.top.size() == 4);
    CHECK(raw.top[0].prob == Approx(softmax({1.0, 2.0, 3.0, 0.0})[2]));
}

TEST_CASE("post-sampling probs after a greedy pick", "[sampling][probs]") {
    SamplingParams p;
    p.temperature = 0.0f;
    SamplerChain chain(p, 4, 64, {});
    const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 0.0f};
    const Token t = chain.sample(logits.data());
    CHECK(t == 2);
    const auto post = chain.post_sampling_probs(t, 3);
    CHECK(post.chosen.prob == 1.0f);
    CHECK(post.chosen.logprob == 0.0f);
    CHECK(post.top[0].token == 2);
}

TEST_CASE("post-sampling probs leave out candidates of probability 0", "[sampling][probs]") {
    SamplingParams p;
    p.temperature = 0.0f;
    p.logit_bias = {{1, -std::numeric_limits<float>::infinity()}};
    SamplerChain chain(p, 4, 64, {});
    const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 0.0f};
    const Token t = chain.sample(logits.data());
    const auto post = chain.post_sampling_probs(t, 4);
    for (const auto& e : post.top) {
        CHECK(e.prob > 0.0f);
        CHECK(e.token != 1);
    }
}
