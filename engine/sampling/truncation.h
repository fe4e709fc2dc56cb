// Truncation samplers: each keeps a subset of the candidates (top-k, top-p, min-p, typical-p, top-n-sigma).
// min_keep is llama.cpp's floor on how many candidates top-p, min-p and typical-p leave.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/sampling/sampler.h"

namespace engine {

// The k highest logits (k <= 0 disables).
class TopKSampler final : public Sampler {
  public:
    explicit TopKSampler(int32_t k) : k_(k) {}
    std::string_view name() const override { return "top-k"; }
    void apply(TokenDataArray& cur) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<TopKSampler>(*this); }

  private:
    int32_t k_;
};

// The smallest most-likely set whose probability reaches p (p >= 1 disables; p = 0 keeps one).
class TopPSampler final : public Sampler {
  public:
    TopPSampler(float p, size_t min_keep) : p_(p), min_keep_(min_keep) {}
    std::string_view name() const override { return "top-p"; }
    void apply(TokenDataArray& cur) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<TopPSampler>(p_, min_keep_); }

  private:
    // How many of the sorted `top` reach the mass; 0 if they do not (and more candidates exist).
    size_t cutoff(const std::vector<TokenData>& top, bool complete) const;

    float p_;
    size_t min_keep_;
    std::vector<TokenData> top_;  // scratch
};

// Candidates whose probability is at least p times the most likely one's (p <= 0 disables).
class MinPSampler final : public Sampler {
  public:
    MinPSampler(float p, size_t min_keep) : p_(p), min_keep_(min_keep) {}
    std::string_view name() const override { return "min-p"; }
    void apply(TokenDataArray& cur) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<MinPSampler>(*this); }

  private:
    float p_;
    size_t min_keep_;
};

// Locally typical sampling: the candidates whose surprise is closest to the entropy, up to mass p
// (p >= 1 disables).
class TypicalSampler final : public Sampler {
  public:
    TypicalSampler(float p, size_t min_keep) : p_(p), min_keep_(min_keep) {}
    std::string_view name() const override { return "typical"; }
    void apply(TokenDataArray& cur) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<TypicalSampler>(*this); }

  private:
    float p_;
    size_t min_keep_;
};

// Candidates whose logit is within n standard deviations of the largest logit (n <= 0 disables).
class TopNSigmaSampler final : public Sampler {
  public:
    explicit TopNSigmaSampler(float n) : n_(n) {}
    std::string_view name() const override { return "top-n-sigma"; }
    void apply(TokenDataArray& cur) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<TopNSigmaSampler>(*this); }

  private:
    float n_;
};

}  // namespace engine
