#include "engine/sampling/adaptive_p.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/sampling/candidates.h"

namespace engine {

namespace {

// Shape of the transform: candidates within about `kWidth` of the target keep high logits, the peak
// logit is kPeak, and the penalty grows quadratically near the target and linearly far from it.
constexpr float kWidth = 0.3f;
constexpr float kPeak = 5.0f;
constexpr float kSharpness = 10.0f;

}  // namespace

AdaptivePSampler::AdaptivePSampler(float target, float decay, uint32_t seed)
    : target_(target), decay_(std::clamp(decay, 0.0f, 0.99f)), seed_(seed), rng_(seed) {
    prime();
}

void AdaptivePSampler::prime() {
    weighted_sum_ = target_ / (1.0f - decay_);
    total_weight_ = 1.0f / (1.0f - decay_);
    pending_token_ = -1;
}

void AdaptivePSampler::reset() {
    prime();
    rng_.seed(seed_);
}

void AdaptivePSampler::set_seed(uint32_t seed) {
    seed_ = seed;
    rng_.seed(seed);
}

float AdaptivePSampler::adapted_target() const {
    const float target = std::clamp(target_, 0.0f, 1.0f);
    return std::clamp(2.0f * target - weighted_sum_ / total_weight_, 0.0f, 1.0f);
}

void AdaptivePSampler::apply(TokenDataArray& cur) {
    require_candidate(cur);
    softmax(cur, false);
    if (target_ < 0.0f) {
        cur.selected = static_cast<int64_t>(pick_discrete(cur, rng_));
        pending_token_ = -1;
        return;
    }
    std::vector<float> original(cur.data.size());
    for (size_t i = 0; i < cur.data.size(); ++i) original[i] = cur.data[i].p;

    const float adapted = adapted_target();
    for (TokenData& td : cur.data) {
        if (td.logit == -std::numeric_limits<float>::infinity()) continue;  // stays banned
        const float d = std::fabs(td.p - adapted) / kWidth;
        td.logit = kPeak - kSharpness * d * d / (1.0f + d);
    }
    cur.sorted = false;
    softmax(cur, false);
    const size_t idx = pick_discrete(cur, rng_);
    cur.selected = static_cast<int64_t>(idx);
    pending_token_ = cur.data[idx].id;
    pending_p_ = original[idx];
}

void AdaptivePSampler::accept(Token token) {
    if (pending_token_ >= 0 && token == pending_token_) {
        weighted_sum_ = pending_p_ + decay_ * weighted_sum_;
        total_weight_ = 1.0f + decay_ * total_weight_;
    }
    pending_token_ = -1;
}

}  // namespace engine
