// DRY ("don't repeat yourself"): penalizes the token that would extend a sequence already seen in the
// recent context, by multiplier * base^(repeat_length - allowed_length). Sequence breakers (strings such as
// "\n") stop a repeat from reaching back across them.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/sampling/sampler.h"
#include "engine/sampling/token_history.h"

namespace engine {

class DrySampler final : public Sampler {
  public:
    // last_n: window size, already resolved (0 disables; the chain maps -1 to the context size).
    // pieces[id] is the decoded text of token id; it is read only here, to find every token (or token
    // sequence) that spells a breaker. Inactive (multiplier 0, base < 1 or last_n 0) samplers skip it.
    DrySampler(float multiplier, float base, int32_t allowed_length, int32_t last_n,
               const std::vector<std::string>& breakers, const std::vector<std::string>& pieces);

    std::string_view name() const override { return "dry"; }
    void apply(TokenDataArray& cur) override;
    void accept(Token token) override;
    void reset() override { history_.clear(); }
    std::unique_ptr<Sampler> clone() const override { return std::make_unique<DrySampler>(*this); }

    bool active() const { return active_; }

  private:
    // Longest repeat reach allowed by the most recent breaker in the window.
    int repeat_limit(int n) const;
    bool is_single_token_breaker(Token token) const;

    float multiplier_;
    float base_;
    int32_t allowed_length_;
    bool active_;
    // Breaker head token -> the tokens that must follow it (empty for a one-token breaker).
    std::unordered_multimap<Token, std::vector<Token>> breakers_;
    TokenHistory history_;
    // Scratch reused between steps.
    std::vector<Token> recent_;
    std::vector<int> match_;
    std::unordered_map<Token, int> max_repeat_;
};

}  // namespace engine
