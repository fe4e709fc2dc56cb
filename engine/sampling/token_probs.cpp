#include "engine/sampling/token_probs.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/sampling/candidates.h"

namespace engine {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Log-softmax normalizer: max + log(sum(exp(l - max))). The exponentials are float (fast on a whole
// vocabulary); the sum and the logprobs are double so tiny probabilities keep accurate logprobs.
struct Normalizer {
    float max = kNegInf;
    double log_sum = 0.0;

    TokenProb prob(Token token, float logit) const {
        if (logit == kNegInf || max == kNegInf) return {token, 0.0f, kNegInf};
        const double lp = static_cast<double>(logit) - max - log_sum;
        return {token, static_cast<float>(std::exp(lp)), static_cast<float>(lp)};
    }
};

template <class LogitAt>
Normalizer normalizer(size_t n, LogitAt logit_at) {
    Normalizer norm;
    norm.max = max_over(n, logit_at);
    if (norm.max == kNegInf) return norm;
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) sum += std::exp(logit_at(i) - norm.max);
    norm.log_sum = std::log(sum);
    return norm;
}

// Indices of the n largest logits, largest first (ties: lower index first). One pass with a heap of n
// entries, so a 150k vocabulary costs one scan, not a sort.
template <class LogitAt>
std::vector<size_t> top_indices(size_t count, size_t n, LogitAt logit_at) {
    n = std::min(n, count);
    std::vector<size_t> heap;
    if (n == 0) return heap;
    heap.reserve(n);
    // "a ranks before b"; the heap keeps the worst kept index at the front.
    auto before = [&](size_t a, size_t b) {
        const float la = logit_at(a);
        const float lb = logit_at(b);
        return la > lb || (la == lb && a < b);
    };
    for (size_t i = 0; i < n; ++i) heap.push_back(i);
    std::make_heap(heap.begin(), heap.end(), before);
    float worst = logit_at(heap.front());
    for (size_t i = n; i < count; ++i) {
        // A later index never wins a tie, so only a strictly larger logit enters.
        if (!(logit_at(i) > worst)) continue;
        std::pop_heap(heap.begin(), heap.end(), before);
        heap.back() = i;
        std::push_heap(heap.begin(), heap.end(), before);
        worst = logit_at(heap.front());
    }
    std::sort_heap(heap.begin(), heap.end(), before);
    return heap;
}

}  // namespace

TokenProbs probs_from_logits(const float* logits, int32_t n_vocab, Token chosen, int32_t n_top) {
    const auto count = static_cast<size_t>(std::max(n_vocab, 0));
    auto logit_at = [logits](size_t i) { return logits[i]; };
    const Normalizer norm = normalizer(count, logit_at);
    TokenProbs out;
    const bool known = chosen >= 0 && static_cast<size_t>(chosen) < count;
    out.chosen = known ? norm.prob(chosen, logits[chosen]) : TokenProb{chosen, 0.0f, kNegInf};
    for (size_t i : top_indices(count, static_cast<size_t>(std::max(n_top, 0)), logit_at)) {
        out.top.push_back(norm.prob(static_cast<Token>(i), logits[i]));
    }
    return out;
}

TokenProbs probs_from_candidates(const TokenDataArray& cur, Token chosen, int32_t n_top) {
    auto logit_at = [&cur](size_t i) { return cur.data[i].logit; };
    const Normalizer norm = normalizer(cur.data.size(), logit_at);
    TokenProbs out;
    out.chosen = TokenProb{chosen, 0.0f, kNegInf};
    for (const TokenData& td : cur.data) {
        if (td.id == chosen) {
            out.chosen = norm.prob(td.id, td.logit);
            break;
        }
    }
    for (size_t i : top_indices(cur.data.size(), static_cast<size_t>(std::max(n_top, 0)), logit_at)) {
        const TokenProb p = norm.prob(cur.data[i].id, cur.data[i].logit);
        // Candidates the samplers ruled out (or whose probability underflows) are not listed, as in
        // llama-server: the list is what the pick could have drawn.
        if (p.prob > 0.0f) out.top.push_back(p);
    }
    return out;
}

}  // namespace engine
