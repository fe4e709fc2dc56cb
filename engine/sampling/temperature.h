// temperature: divides logits by temp; temp <= 0 keeps only the best candidate (greedy). With
// dynatemp_range > 0 the temperature moves within [temp - range, temp + range] with the normalized entropy
// of the candidates (raised to `exponent`): confident steps run colder, uncertain ones hotter.
#pragma once

#include "engine/sampling/sampler.h"

namespace engine {

class TemperatureSampler final : public Sampler {
  public:
    explicit TemperatureSampler(float temp, float dynatemp_range = 0.0f, float dynatemp_exponent = 1.0f)
        : temp_(temp), range_(dynatemp_range), exponent_(dynatemp_exponent) {}

    std::string_view name() const override { return range_ > 0.0f ? "temp-ext" : "temp"; }
    void apply(TokenDataArray& cur) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<TemperatureSampler>(*this); }

    // The temperature dynamic temperature would use for these candidates.
    float dynamic_temperature(TokenDataArray& cur) const;

  private:
    float temp_;
    float range_;
    float exponent_;
};

// Scales the logits by 1/temp, or for temp <= 0 sets every logit but the (first) largest to -inf.
void apply_temperature(TokenDataArray& cur, float temp);

}  // namespace engine
