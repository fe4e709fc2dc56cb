#include "engine/sampling/sampler_chain.h"

#include <algorithm>
#include <stdexcept>

#include "engine/sampling/adaptive_p.h"
#include "engine/sampling/candidates.h"
#include "engine/sampling/dry.h"
#include "engine/sampling/logit_bias.h"
#include "engine/sampling/mirostat.h"
#include "engine/sampling/penalties.h"
#include "engine/sampling/pickers.h"
#include "engine/sampling/temperature.h"
#include "engine/sampling/truncation.h"
#include "engine/sampling/xtc.h"

namespace engine {

namespace {

int32_t resolve_window(int32_t last_n, int32_t n_ctx) {
    return last_n == -1 ? n_ctx : last_n;
}

std::unique_ptr<Sampler> make_middle(SamplerType type, const SamplingParams& p, int32_t n_ctx, uint32_t seed,
                                     const std::vector<std::string>& pieces) {
    const auto min_keep = static_cast<size_t>(std::max(p.min_keep, 0));
    switch (type) {
        case SamplerType::penalties:
            return std::make_unique<PenaltiesSampler>(resolve_window(p.repeat_last_n, n_ctx),
                                                      p.repeat_penalty, p.frequency_penalty,
                                                      p.presence_penalty);
        case SamplerType::dry:
            return std::make_unique<DrySampler>(p.dry_multiplier, p.dry_base, p.dry_allowed_length,
                                                resolve_window(p.dry_penalty_last_n, n_ctx),
                                                p.dry_sequence_breakers, pieces);
        case SamplerType::top_n_sigma:
            return std::make_unique<TopNSigmaSampler>(p.top_n_sigma);
        case SamplerType::top_k:
            return std::make_unique<TopKSampler>(p.top_k);
        case SamplerType::typical_p:
            return std::make_unique<TypicalSampler>(p.typical_p, min_keep);
        case SamplerType::top_p:
            return std::make_unique<TopPSampler>(p.top_p, min_keep);
        case SamplerType::min_p:
            return std::make_unique<MinPSampler>(p.min_p, min_keep);
        case SamplerType::xtc:
            return std::make_unique<XtcSampler>(p.xtc_probability, p.xtc_threshold, min_keep, seed);
        case SamplerType::temperature:
            return std::make_unique<TemperatureSampler>(p.temperature, p.dynatemp_range, p.dynatemp_exponent);
        case SamplerType::adaptive_p:
            return nullptr;  // a final pick, added after the middle
    }
    return nullptr;
}

}  // namespace

SamplerChain::SamplerChain(const SamplingParams& params, int32_t n_vocab, int32_t n_ctx,
                           const std::vector<std::string>& pieces, std::unique_ptr<TokenConstraint> grammar,
                           bool grammar_first)
    : params_(params),
      n_vocab_(n_vocab),
      seed_(resolve_seed(params.seed)),
      grammar_(std::move(grammar)),
      grammar_first_(grammar_first) {
    if (n_vocab <= 0) throw std::invalid_argument("sampler chain: vocabulary size must be positive");
    if (std::string err = validate(params, n_vocab); !err.empty()) {
        throw std::invalid_argument("sampler chain: " + err);
    }
    if (!params.logit_bias.empty())
        samplers_.push_back(std::make_unique<LogitBiasSampler>(params.logit_bias));

    if (params.mirostat == 1 || params.mirostat == 2) {
        samplers_.push_back(std::make_unique<TemperatureSampler>(params.temperature));
        if (params.mirostat == 1) {
            samplers_.push_back(
                std::make_unique<MirostatSampler>(n_vocab, seed_, params.mirostat_tau, params.mirostat_eta));
        } else {
            samplers_.push_back(
                std::make_unique<MirostatV2Sampler>(seed_, params.mirostat_tau, params.mirostat_eta));
        }
        return;
    }
    for (SamplerType type : params.samplers) {
        if (auto sampler = make_middle(type, params, n_ctx, seed_, pieces))
            samplers_.push_back(std::move(sampler));
    }
    if (params.uses_adaptive_p()) {
        samplers_.push_back(
            std::make_unique<AdaptivePSampler>(params.adaptive_target, params.adaptive_decay, seed_));
    } else if (params.temperature <= 0.0f) {
        samplers_.push_back(std::make_unique<GreedySampler>());
    } else {
        samplers_.push_back(std::make_unique<DistSampler>(seed_));
    }
}

Token SamplerChain::run(const float* logits, bool constrain_first) {
    fill_candidates(cur_, logits, n_vocab_);
    if (constrain_first) grammar_->apply(cur_);
    for (auto& sampler : samplers_) sampler->apply(cur_);
    if (cur_.selected < 0 || static_cast<size_t>(cur_.selected) >= cur_.data.size()) {
        throw std::logic_error("sampler chain: the final sampler did not pick a token");
    }
    return cur_.data[static_cast<size_t>(cur_.selected)].id;
}

Token SamplerChain::sample(const float* logits) {
    if (!grammar_) return run(logits, false);
    if (grammar_first_) return run(logits, true);
    // Rejection: most picks already satisfy the grammar, and checking one token is far cheaper than
    // constraining the whole vocabulary.
    const Token token = run(logits, false);
    if (grammar_->allows(token)) return token;
    return run(logits, true);
}

bool SamplerChain::plain_draw() const {
    return !grammar_ && params_.mirostat == 0 && !params_.uses_adaptive_p() && params_.temperature > 0.0f &&
           params_.xtc_probability <= 0.0f && !samplers_.empty() && samplers_.back()->name() == "dist";
}

const TokenDataArray& SamplerChain::distribution(const float* logits) {
    fill_candidates(cur_, logits, n_vocab_);
    for (size_t i = 0; i + 1 < samplers_.size(); ++i) samplers_[i]->apply(cur_);
    softmax(cur_, false);
    cur_.selected = -1;
    return cur_;
}

void SamplerChain::accept(Token token, bool accept_grammar) {
    if (grammar_ && accept_grammar) grammar_->accept(token);
    for (auto& sampler : samplers_) sampler->accept(token);
}

void SamplerChain::reset() {
    if (params_.seed == kRandomSeed) {
        seed_ = resolve_seed(kRandomSeed);
        for (auto& sampler : samplers_) sampler->set_seed(seed_);
    }
    for (auto& sampler : samplers_) sampler->reset();
    if (grammar_) grammar_->reset();
}

SamplerChain SamplerChain::clone() const {
    SamplerChain copy;
    copy.params_ = params_;
    copy.n_vocab_ = n_vocab_;
    copy.seed_ = seed_;
    for (const auto& sampler : samplers_) copy.samplers_.push_back(sampler->clone());
    if (grammar_) copy.grammar_ = grammar_->clone();
    copy.grammar_first_ = grammar_first_;
    copy.cur_ = cur_;
    return copy;
}

TokenProbs SamplerChain::raw_probs(const float* logits, Token chosen, int32_t n_top) const {
    return probs_from_logits(logits, n_vocab_, chosen, n_top);
}

TokenProbs SamplerChain::post_sampling_probs(Token chosen, int32_t n_top) const {
    return probs_from_candidates(cur_, chosen, n_top);
}

std::string SamplerChain::describe() const {
    std::string out = grammar_ ? (grammar_first_ ? "grammar -> " : "") : "";
    for (size_t i = 0; i < samplers_.size(); ++i) {
        if (i > 0) out += " -> ";
        out += samplers_[i]->name();
    }
    if (grammar_ && !grammar_first_) out += " (grammar by rejection)";
    return out;
}

}  // namespace engine
