// XTC ("exclude top choices"): with the given probability per step, removes every candidate at or above
// the threshold probability except the least likely of them, steering away from the obvious choices.
#pragma once

#include <random>

#include "engine/sampling/sampler.h"

namespace engine {

class XtcSampler final : public Sampler {
  public:
    // Inactive when probability <= 0 or threshold > 0.5 (at most one candidate could then qualify).
    XtcSampler(float probability, float threshold, size_t min_keep, uint32_t seed);

    std::string_view name() const override { return "xtc"; }
    void apply(TokenDataArray& cur) override;
    void reset() override { rng_.seed(seed_); }
    void set_seed(uint32_t seed) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<XtcSampler>(*this); }

  private:
    float probability_;
    float threshold_;
    size_t min_keep_;
    uint32_t seed_;
    std::mt19937 rng_;
};

}  // namespace engine
