// logit_bias: adds a fixed bias to chosen tokens' logits; a bias of -inf bans the token.
#pragma once

#include <vector>

#include "engine/sampling/sampler.h"

namespace engine {

struct LogitBias {
    Token token;
    float bias;
};

class LogitBiasSampler final : public Sampler {
  public:
    explicit LogitBiasSampler(std::vector<LogitBias> biases) : biases_(std::move(biases)) {}

    std::string_view name() const override { return "logit-bias"; }
    void apply(TokenDataArray& cur) override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<LogitBiasSampler>(biases_); }

  private:
    std::vector<LogitBias> biases_;
    std::vector<LogitBias> unplaced_;  // scratch: biases whose token is not at index == id
};

}  // namespace engine
