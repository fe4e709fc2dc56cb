// penalties: repeat (divide positive / multiply negative logits), frequency (per occurrence) and presence
// (once) penalties for tokens seen in the last `last_n` accepted tokens.
#pragma once

#include <unordered_map>

#include "engine/sampling/sampler.h"
#include "engine/sampling/token_history.h"

namespace engine {

class PenaltiesSampler final : public Sampler {
  public:
    // last_n: window size, already resolved (0 disables; the chain maps -1 to the context size).
    PenaltiesSampler(int32_t last_n, float repeat, float frequency, float presence);

    std::string_view name() const override { return "penalties"; }
    void apply(TokenDataArray& cur) override;
    void accept(Token token) override;
    void reset() override;
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<PenaltiesSampler>(*this); }

    // How often token occurs in the current window.
    int count(Token token) const;

  private:
    void penalize(TokenData& td, int count) const;

    int32_t last_n_;
    float repeat_;
    float frequency_;
    float presence_;
    TokenHistory window_;
    std::unordered_map<Token, int> counts_;
};

}  // namespace engine
