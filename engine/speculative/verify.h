// Verification of a draft against the target model's logits: which draft tokens the target accepts,
// and the token of its own that follows them. Exact: the emitted tokens are distributed as plain
// decoding would draw them, and the sampler chain advances only over emitted tokens.
//
// rows[i] are the target's logits after the pending token and the first i draft tokens (rows.size() ==
// draft.size() + 1). Without a draft distribution the rule is "sample and compare": the chain samples
// at row i as it would without speculation; the draft token is accepted when it equals the pick, and
// the first pick that differs ends the step. This is the p/q rule with a one-hot q (accept with
// probability p(d), else draw from p without d), it needs no extra random numbers, and with the same
// seed it emits exactly the tokens plain decoding emits.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "engine/sampling/sampler_chain.h"
#include "engine/sampling/token_probs.h"

namespace engine::spec {

// The request's settings leave no token to pick (every candidate banned): the request's fault.
struct NoTokenError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The sampled text cannot go on under the request's constraint (a lazy grammar whose trigger fired on
// text the grammar does not match): also the request's fault.
struct RejectedTextError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct ProbsOptions {
    int32_t n_probs = 0;        // 0: none
    bool post_sampling = false; // from the chain's survivors instead of the raw logits
};

struct Verified {
    std::vector<Token> tokens;       // accepted draft tokens, then one token of the target's own
    std::vector<TokenProbs> probs;   // one per token when n_probs > 0
    size_t n_accepted() const { return tokens.empty() ? 0 : tokens.size() - 1; }
};

// Sample and compare (greedy requests, n-gram drafts, and any chain whose final pick is not a plain
// draw). Every emitted token is accepted into the chain.
Verified verify_by_sampling(SamplerChain& chain, std::span<const float* const> rows,
                            std::span<const Token> draft, const ProbsOptions& probs);

// Sample and compare over several drafts that all continue the pending token (lookahead's branches).
// row0: the target's logits after the pending token; rows[b][i]: after the pending token and the first
// i + 1 tokens of drafts[b] (rows[b].size() == drafts[b].size()). The chain samples at row0; while some
// draft agrees with every token sampled so far, it samples next at that draft's row. Drafts that agree on
// a prefix share its context, so every pick is drawn from the right distribution: the chain draws exactly
// what plain decoding draws (same seed, same tokens). *followed: the draft whose prefix the accepted tokens
// are (-1 when none was accepted).
Verified verify_tree_by_sampling(SamplerChain& chain, const float* row0, std::span<const std::vector<Token>> drafts,
                                 std::span<const std::vector<const float*>> rows, const ProbsOptions& probs,
                                 int32_t* followed);

// The p/q rule (Leviathan et al., Chen et al.), for a draft drawn from known distributions: q[i] is the
// dense distribution draft[i] was drawn from (over the draft model's vocabulary). Draft token d is accepted
// with probability min(1, p(d)/q(d)), p being the target's distribution after the request's whole chain
// (SamplerChain::distribution); the first rejection emits a draw from normalize(max(0, p - q)) and ends the
// step; after a fully accepted draft the chain samples one token of its own. The emitted tokens are
// distributed exactly as the target's own draws. Needs chain.plain_draw(); `rng` draws the acceptance
// uniforms and the residual tokens (the chain's generator draws the rest).
Verified verify_by_ratio(SamplerChain& chain, std::span<const float* const> rows, std::span<const Token> draft,
                         std::span<const std::vector<float>> q, std::mt19937& rng, const ProbsOptions& probs);

// The pieces of the p/q rule, for tests: the probability that d is accepted, and the residual
// distribution normalize(max(0, p - q)) over p's support (p itself when p <= q everywhere).
double acceptance_probability(double p_d, double q_d);
std::vector<double> residual_distribution(std::span<const double> p, std::span<const double> q);

}  // namespace engine::spec
