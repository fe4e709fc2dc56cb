// Probabilities reported with each generated token: the OpenAI logprobs / top_logprobs and llama.cpp's
// n_probs (softmax of the raw logits), or llama.cpp's post_sampling_probs (over the candidates that
// survived the chain).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/util/token_data.h"

namespace engine {

struct TokenProb {
    Token token;
    float prob;
    float logprob;  // natural log; -inf for a banned token
};

struct TokenProbs {
    TokenProb chosen;            // the sampled token
    std::vector<TokenProb> top;  // the n most likely, most likely first
};

// From the softmax of the raw logits of the whole vocabulary. The top n come from a partial sort.
TokenProbs probs_from_logits(const float* logits, int32_t n_vocab, Token chosen, int32_t n_top);

// From the softmax of the surviving candidates' logits (what the final pick drew from). A chosen token
// that is not among them gets probability 0; the top list leaves out candidates of probability 0.
TokenProbs probs_from_candidates(const TokenDataArray& cur, Token chosen, int32_t n_top);

}  // namespace engine
