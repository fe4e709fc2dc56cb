#include "engine/speculative/verify.h"

#include "engine/grammar/grammar_error.h"

namespace engine::spec {

namespace {

Token sample_or_throw(SamplerChain& chain, const float* logits) {
    try {
        return chain.sample(logits);
    } catch (const GrammarBudgetError&) {
        throw;
    } catch (const std::runtime_error& e) {
        throw NoTokenError(e.what());
    }
}

void accept_or_throw(SamplerChain& chain, Token tok) {
    try {
        chain.accept(tok);
    } catch (const GrammarBudgetError&) {
        throw;
    } catch (const std::runtime_error& e) {
        throw RejectedTextError(e.what());
    }
}

void add_probs(Verified& v, const SamplerChain& chain, const float* logits, Token tok, const ProbsOptions& po) {
    if (po.n_probs <= 0) return;
    v.probs.push_back(po.post_sampling ? chain.post_sampling_probs(tok, po.n_probs)
                                       : chain.raw_probs(logits, tok, po.n_probs));
}

}  // namespace

Verified verify_by_sampling(SamplerChain& chain, std::span<const float* const> rows, std::span<const Token> draft,
                            const ProbsOptions& po) {
    if (rows.size() != draft.size() + 1)
        throw std::invalid_argument("verify: need one logits row more than draft tokens");
    Verified v;
    for (size_t i = 0; i < rows.size(); ++i) {
        const Token tok = sample_or_throw(chain, rows[i]);
        add_probs(v, chain, rows[i], tok, po);
        accept_or_throw(chain, tok);
        v.tokens.push_back(tok);
        if (i == draft.size() || tok != draft[i]) break;
    }
    return v;
}

}  // namespace engine::spec
