#include "engine/speculative/verify.h"

#include <algorithm>

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

Verified verify_tree_by_sampling(SamplerChain& chain, const float* row0, std::span<const std::vector<Token>> drafts,
                                 std::span<const std::vector<const float*>> rows, const ProbsOptions& po,
                                 int32_t* followed) {
    if (rows.size() != drafts.size()) throw std::invalid_argument("verify: need one row list per draft");
    for (size_t b = 0; b < drafts.size(); ++b)
        if (rows[b].size() != drafts[b].size())
            throw std::invalid_argument("verify: need one logits row per draft token");
    Verified v;
    int32_t cur = -1;  // the draft that agrees with everything accepted so far
    const float* row = row0;
    for (size_t depth = 0;; ++depth) {
        const Token tok = sample_or_throw(chain, row);
        add_probs(v, chain, row, tok, po);
        accept_or_throw(chain, tok);
        v.tokens.push_back(tok);
        // Another draft that agrees with the accepted tokens and has this pick next.
        int32_t next = -1;
        for (size_t b = 0; b < drafts.size() && next < 0; ++b) {
            const std::vector<Token>& d = drafts[b];
            if (d.size() <= depth || d[depth] != tok) continue;
            if (!std::equal(v.tokens.begin(), v.tokens.end() - 1, d.begin())) continue;
            next = (int32_t)b;
        }
        if (next < 0) break;
        cur = next;
        row = rows[(size_t)cur][depth];
    }
    if (followed) *followed = cur;
    return v;
}

double acceptance_probability(double p_d, double q_d) {
    if (q_d <= 0.0) return 1.0;  // never drawn from q; accepting keeps p's share
    return std::min(1.0, p_d / q_d);
}

std::vector<double> residual_distribution(std::span<const double> p, std::span<const double> q) {
    std::vector<double> r(p.size(), 0.0);
    double sum = 0.0;
    for (size_t i = 0; i < p.size(); ++i) {
        r[i] = std::max(0.0, p[i] - (i < q.size() ? q[i] : 0.0));
        sum += r[i];
    }
    // p == q (up to rounding): a rejection is (almost) impossible, and p is the right fallback.
    if (sum <= 1e-12) return std::vector<double>(p.begin(), p.end());
    for (double& x : r) x /= sum;
    return r;
}

Verified verify_by_ratio(SamplerChain& chain, std::span<const float* const> rows, std::span<const Token> draft,
                         std::span<const std::vector<float>> q, std::mt19937& rng, const ProbsOptions& po) {
    if (rows.size() != draft.size() + 1 || q.size() != draft.size())
        throw std::invalid_argument("verify: need one logits row more than draft tokens, one q per draft token");
    if (!chain.plain_draw()) throw std::logic_error("verify_by_ratio: the chain's pick is not a plain draw");
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Verified v;
    for (size_t i = 0; i < draft.size(); ++i) {
        const TokenDataArray& cur = chain.distribution(rows[i]);
        const Token d = draft[i];
        const std::vector<float>& qi = q[i];
        double p_d = 0.0;
        for (const TokenData& td : cur.data)
            if (td.id == d) p_d = td.p;
        const double q_d = (size_t)d < qi.size() ? qi[(size_t)d] : 0.0;
        Token tok = d;
        const bool accepted = uniform(rng) < acceptance_probability(p_d, q_d);
        if (!accepted) {
            std::vector<double> p(cur.data.size()), qq(cur.data.size());
            bool any = false;
            for (size_t k = 0; k < cur.data.size(); ++k) {
                p[k] = cur.data[k].p;
                any = any || p[k] > 0.0;
                const Token id = cur.data[k].id;
                qq[k] = (size_t)id < qi.size() ? qi[(size_t)id] : 0.0;
            }
            if (!any) throw NoTokenError("every candidate token is banned");
            const std::vector<double> r = residual_distribution(p, qq);
            double u = uniform(rng), acc = 0.0;
            size_t pick = 0;
            for (size_t k = 0; k < r.size(); ++k) {
                if (r[k] <= 0.0) continue;
                pick = k;
                acc += r[k];
                if (u < acc) break;
            }
            tok = cur.data[pick].id;
        }
        add_probs(v, chain, rows[i], tok, po);
        accept_or_throw(chain, tok);
        v.tokens.push_back(tok);
        if (!accepted) return v;
    }
    const float* last = rows[draft.size()];
    const Token tok = sample_or_throw(chain, last);
    add_probs(v, chain, last, tok, po);
    accept_or_throw(chain, tok);
    v.tokens.push_back(tok);
    return v;
}

}  // namespace engine::spec
