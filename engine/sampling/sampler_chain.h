// The sampler chain of one request: logit_bias, the configured middle samplers (penalties, DRY,
// top-n-sigma, top-k, typical-p, top-p, min-p, XTC, temperature by default), then the final pick: dist,
// greedy when temperature <= 0, adaptive-p when configured. With mirostat it is logit_bias, temperature,
// mirostat (as in llama.cpp). An optional grammar constrains the pick, by rejection (default: sample, check,
// and only if rejected constrain fresh candidates and sample again) or grammar-first (constrain, sample).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/sampling/sampler.h"
#include "engine/sampling/sampling_params.h"
#include "engine/sampling/token_probs.h"
#include "engine/util/constraint.h"

namespace engine {

class SamplerChain {
  public:
    // n_ctx resolves the "-1 = context size" windows of repeat_last_n and dry_penalty_last_n. pieces[id]
    // is the decoded text of token id, read here only (DRY sequence breakers; may be empty without DRY).
    // A kRandomSeed seed is drawn once here; seed() reports the one in use.
    SamplerChain(const SamplingParams& params, int32_t n_vocab, int32_t n_ctx,
                 const std::vector<std::string>& pieces, std::unique_ptr<TokenConstraint> grammar = nullptr,
                 bool grammar_first = false);
    SamplerChain(SamplerChain&&) noexcept = default;
    SamplerChain& operator=(SamplerChain&&) noexcept = default;

    // Picks the next token from logits[0..n_vocab). Does not accept it. Throws std::runtime_error when no
    // token can be picked (every candidate banned, e.g. by logit_bias or a grammar at a dead end).
    Token sample(const float* logits);

    // Records a token of the sequence: penalties/DRY history, adaptive-p state and (unless accept_grammar
    // is false, as for prompt tokens) the grammar.
    void accept(Token token, bool accept_grammar = true);

    // Back to the initial state for a new request (history, mirostat mu, adaptive-p EMA, grammar, random
    // generators re-seeded; a random seed is drawn anew).
    void reset();

    // A deep copy (history, grammar, random generator state) that continues exactly like this chain.
    SamplerChain clone() const;

    // Probabilities for the last sample(): from the raw logits (pass the same logits) or from the
    // candidates that survived the chain.
    TokenProbs raw_probs(const float* logits, Token chosen, int32_t n_top) const;
    TokenProbs post_sampling_probs(Token chosen, int32_t n_top) const;

    // True when the final pick is a plain draw from the survivors' softmax (dist, no grammar, no mirostat,
    // adaptive-p or XTC draw): then distribution() is exactly what sample() draws from, which speculative
    // verification by the p/q rule needs.
    bool plain_draw() const;
    // Runs every sampler but the final pick over logits and leaves the survivors with normalized p in
    // candidates() (unsorted). Changes no state: nothing is accepted or drawn.
    const TokenDataArray& distribution(const float* logits);

    // Candidates after the last sample() (the survivors, with their final logits).
    const TokenDataArray& candidates() const { return cur_; }

    uint32_t seed() const { return seed_; }
    int32_t n_vocab() const { return n_vocab_; }
    bool has_grammar() const { return grammar_ != nullptr; }
    // "logit-bias -> top-k -> ... -> dist", for logs.
    std::string describe() const;

  private:
    SamplerChain() = default;
    // Fills fresh candidates from logits and runs every sampler; returns the picked token.
    Token run(const float* logits, bool constrain_first);

    SamplingParams params_;
    int32_t n_vocab_ = 0;
    uint32_t seed_ = 0;
    std::vector<std::unique_ptr<Sampler>> samplers_;
    std::unique_ptr<TokenConstraint> grammar_;
    bool grammar_first_ = false;
    TokenDataArray cur_;
};

}  // namespace engine
