// Mirostat v1 and v2: pick tokens so that the average surprise (-log2 p) tracks a target tau, adjusting the
// truncation threshold mu by eta times the error after every pick. mu starts at 2 * tau.
#pragma once

#include <random>
#include <vector>

#include "engine/sampling/sampler.h"

namespace engine {

// v1 estimates the Zipf exponent from the m most likely tokens and keeps the top k that exponent implies.
class MirostatSampler final : public Sampler {
  public:
    MirostatSampler(int32_t n_vocab, uint32_t seed, float tau, float eta, int32_t m = 100);

    std::string_view name() const override { return "mirostat"; }
    void apply(TokenDataArray& cur) override;
    void reset() override;
    void set_seed(uint32_t seed) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<MirostatSampler>(*this); }

    float mu() const { return mu_; }

  private:
    // k from the estimated Zipf exponent (clamped to [1, candidates]).
    size_t estimate_k(const std::vector<TokenData>& top, size_t n_candidates) const;

    int32_t n_vocab_;
    uint32_t seed_;
    float tau_;
    float eta_;
    int32_t m_;
    float mu_;
    std::mt19937 rng_;
    std::vector<TokenData> top_;  // scratch
};

// v2 keeps the tokens whose surprise is at most mu.
class MirostatV2Sampler final : public Sampler {
  public:
    MirostatV2Sampler(uint32_t seed, float tau, float eta);

    std::string_view name() const override { return "mirostat-v2"; }
    void apply(TokenDataArray& cur) override;
    void reset() override;
    void set_seed(uint32_t seed) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<MirostatV2Sampler>(*this); }

    float mu() const { return mu_; }

  private:
    uint32_t seed_;
    float tau_;
    float eta_;
    float mu_;
    std::mt19937 rng_;
};

}  // namespace engine
