// Final samplers that pick the token: dist (random draw from the softmax) and greedy (largest logit).
#pragma once

#include <random>

#include "engine/sampling/sampler.h"

namespace engine {

class DistSampler final : public Sampler {
  public:
    explicit DistSampler(uint32_t seed) : seed_(seed), rng_(seed) {}

    std::string_view name() const override { return "dist"; }
    void apply(TokenDataArray& cur) override;
    void reset() override { rng_.seed(seed_); }
    void set_seed(uint32_t seed) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<DistSampler>(*this); }

  private:
    uint32_t seed_;
    std::mt19937 rng_;
};

class GreedySampler final : public Sampler {
  public:
    std::string_view name() const override { return "greedy"; }
    void apply(TokenDataArray& cur) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<GreedySampler>(); }
};

}  // namespace engine
