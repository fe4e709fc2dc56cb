#include "engine/sampling/mirostat.h"

#include <algorithm>
#include <cmath>

#include "engine/sampling/candidates.h"

namespace engine {

MirostatSampler::MirostatSampler(int32_t n_vocab, uint32_t seed, float tau, float eta, int32_t m)
    : n_vocab_(n_vocab), seed_(seed), tau_(tau), eta_(eta), m_(m), mu_(2.0f * tau), rng_(seed) {}

void MirostatSampler::reset() {
    mu_ = 2.0f * tau_;
    rng_.seed(seed_);
}

void MirostatSampler::set_seed(uint32_t seed) {
    seed_ = seed;
    rng_.seed(seed);
}

size_t MirostatSampler::estimate_k(const std::vector<TokenData>& top, size_t n_candidates) const {
    // Least-squares fit of log(p_i / p_i+1) against log((i+2) / (i+1)) over live neighbours.
    float sum_tb = 0.0f;
    float sum_tt = 0.0f;
    for (size_t i = 0; i + 1 < top.size() && top[i + 1].p > 0.0f; ++i) {
        const float t = std::log(static_cast<float>(i + 2) / static_cast<float>(i + 1));
        const float b = std::log(top[i].p / top[i + 1].p);
        sum_tb += t * b;
        sum_tt += t * t;
    }
    if (sum_tt == 0.0f) return 1;  // a single live candidate
    const float s_hat = sum_tb / sum_tt;
    const float eps_hat = s_hat - 1.0f;
    const float k =
        std::pow(eps_hat * std::pow(2.0f, mu_) / (1.0f - std::pow(static_cast<float>(n_vocab_), -eps_hat)),
                 1.0f / s_hat);
    if (!(k >= 1.0f)) return 1;  // NaN or below one
    if (k >= static_cast<float>(n_candidates)) return n_candidates;
    return static_cast<size_t>(k);
}

void MirostatSampler::apply(TokenDataArray& cur) {
    require_candidate(cur);
    softmax(cur, false);
    copy_top(cur.data, static_cast<size_t>(std::max(m_, 1)), top_);
    const size_t k = estimate_k(top_, cur.data.size());
    // Sorted, most probable first, also when k keeps them all: the draw walks them in that order, as
    // llama.cpp's (which sorts on entry), so a seed picks the same token.
    keep_top(cur, k);
    softmax(cur, false);
    const size_t idx = pick_discrete(cur, rng_);
    cur.selected = static_cast<int64_t>(idx);
    const float surprise = -std::log2(cur.data[idx].p);
    mu_ -= eta_ * (surprise - tau_);
}

MirostatV2Sampler::MirostatV2Sampler(uint32_t seed, float tau, float eta)
    : seed_(seed), tau_(tau), eta_(eta), mu_(2.0f * tau), rng_(seed) {}

void MirostatV2Sampler::reset() {
    mu_ = 2.0f * tau_;
    rng_.seed(seed_);
}

void MirostatV2Sampler::set_seed(uint32_t seed) {
    seed_ = seed;
    rng_.seed(seed);
}

void MirostatV2Sampler::apply(TokenDataArray& cur) {
    require_candidate(cur);
    // Sorted, most probable first: the draw walks the survivors in that order, as llama.cpp's does.
    softmax(cur, true);
    // Keep the candidates with surprise <= mu, never fewer than the best one.
    // surprise > mu  <=>  p < 2^-mu: one exp2 instead of a log2 per candidate.
    const float min_p = std::exp2(-mu_);
    auto too_surprising = [&](const TokenData& td) { return td.p < min_p; };
    const size_t before = cur.data.size();
    if (too_surprising(cur.data.front())) {
        cur.data.resize(1);
    } else {
        std::erase_if(cur.data, too_surprising);
    }
    if (cur.data.size() != before) softmax(cur, true);  // renormalize what is left
    const size_t idx = pick_discrete(cur, rng_);
    cur.selected = static_cast<int64_t>(idx);
    const float surprise = -std::log2(cur.data[idx].p);
    mu_ -= eta_ * (surprise - tau_);
}

}  // namespace engine
