// Helpers of the KV-cache model tests: evaluate tokens into one sequence and continue greedily.
#pragma once

#include <cmath>
#include <vector>

#include "golden_util.h"

// Evaluates toks at positions pos0.. in seq (n_batch-sized pieces); returns the last token's logits.
inline std::vector<float> eval_seq(engine::Context& ctx, engine::SeqId seq,
                                   const std::vector<engine::Token>& toks, engine::Pos pos0) {
    engine::Batch b;
    const size_t step = ctx.params().n_batch;
    for (size_t i = 0; i < toks.size(); i += step) {
        b.clear();
        for (size_t j = i; j < std::min(toks.size(), i + step); ++j)
            b.add(toks[j], pos0 + (engine::Pos)j, {seq}, j + 1 == toks.size());
        REQUIRE(ctx.decode(b) == engine::Context::Status::Ok);
    }
    const float* l = ctx.logits(b.size() - 1);
    return std::vector<float>(l, l + ctx.n_vocab());
}

// Greedy continuation of seq from the logits of its last token (tokens at positions < pos).
// Every generated token but the last is evaluated; out_logits collects the logits each pick used.
inline std::vector<engine::Token> greedy_from(engine::Context& ctx, engine::SeqId seq,
                                              std::vector<float> logits, engine::Pos pos, int n,
                                              std::vector<std::vector<float>>* out_logits = nullptr) {
    std::vector<engine::Token> out;
    for (int i = 0; i < n; ++i) {
        if (out_logits) out_logits->push_back(logits);
        const engine::Token t = argmax(logits.data(), ctx.n_vocab());
        out.push_back(t);
        if (i + 1 == n) break;
        logits = eval_seq(ctx, seq, {t}, pos++);
    }
    return out;
}

inline std::vector<double> log_softmax(const std::vector<float>& logits) {
    double mx = -1e300, sum = 0;
    for (float l : logits) mx = std::max(mx, (double)l);
    for (float l : logits) sum += std::exp(l - mx);
    const double lse = mx + std::log(sum);
    std::vector<double> out(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) out[i] = logits[i] - lse;
    return out;
}

// Largest |difference| of log-probabilities over the ids that either side ranks in its top 5.
inline double top_logprob_delta(const std::vector<float>& a, const std::vector<float>& b) {
    const auto la = log_softmax(a), lb = log_softmax(b);
    std::vector<size_t> ids;
    for (const auto* l : {&la, &lb}) {
        std::vector<size_t> idx(l->size());
        for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
        std::partial_sort(idx.begin(), idx.begin() + 5, idx.end(),
                          [&](size_t x, size_t y) { return (*l)[x] > (*l)[y]; });
        ids.insert(ids.end(), idx.begin(), idx.begin() + 5);
    }
    double worst = 0;
    for (size_t i : ids) worst = std::max(worst, std::fabs(la[i] - lb[i]));
    return worst;
}
