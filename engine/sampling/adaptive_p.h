// adaptive-p: picks tokens whose probability is near a target, adapting to what it picked recently.
//
// State: an exponential moving average of the original probability of each picked token, kept as
// weighted_sum / total_weight and primed as if the target had always been hit. Each step:
//   p = softmax(logits); adapted = clamp(2 * target - weighted_sum / total_weight, 0, 1)
//   d_i = |p_i - adapted| / 0.3; logit_i = 5 - 10 * d_i^2 / (1 + d_i)   (banned candidates stay -inf)
//   sample from softmax(logit); on accept: weighted_sum = p_picked + decay * weighted_sum,
//   total_weight = 1 + decay * total_weight.
// A negative target samples the distribution unchanged. It picks the token, so it ends the chain.
#pragma once

#include <random>
#include <vector>

#include "engine/sampling/sampler.h"

namespace engine {

class AdaptivePSampler final : public Sampler {
  public:
    // decay is clamped to [0, 0.99].
    AdaptivePSampler(float target, float decay, uint32_t seed);

    std::string_view name() const override { return "adaptive-p"; }
    void apply(TokenDataArray& cur) override;
    // Feeds the EMA when token is the one apply() picked (a grammar may reject a pick and resample).
    void accept(Token token) override;
    void reset() override;
    void set_seed(uint32_t seed) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<AdaptivePSampler>(*this); }

    float target() const { return target_; }
    float decay() const { return decay_; }
    float weighted_sum() const { return weighted_sum_; }
    float total_weight() const { return total_weight_; }
    // The target this step aims at, given the history so far.
    float adapted_target() const;

  private:
    void prime();

    float target_;
    float decay_;
    uint32_t seed_;
    std::mt19937 rng_;
    float weighted_sum_ = 0.0f;
    float total_weight_ = 0.0f;
    Token pending_token_ = -1;  // picked by the last apply(), not yet accepted
    float pending_p_ = 0.0f;    // its original probability
};

}  // namespace engine
