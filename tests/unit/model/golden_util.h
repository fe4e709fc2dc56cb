// Shared helpers of the model tests: paths, golden files, greedy generation in-process.
#pragma once

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/context.h"
#include "engine/model/model.h"
#include "engine/tokenizer/vocab.h"

inline std::string shared_path(const std::string& rel) {
    return std::string(GGSERVE_SHARED_DIR) + "/" + rel;
}

inline nlohmann::json load_golden(const std::string& name) {
    std::ifstream f(shared_path("golden/" + name));
    return nlohmann::json::parse(f);
}

inline engine::Token argmax(const float* logits, int n) {
    int best = 0;
    for (int i = 1; i < n; ++i)
        if (logits[i] > logits[best]) best = i;
    return best;
}

// Greedy continuation of prompt in sequence seq of ctx (the cache must not hold seq yet).
inline std::vector<engine::Token> greedy(engine::Context& ctx, const std::vector<engine::Token>& prompt,
                                         int n, engine::SeqId seq = 0) {
    engine::Batch b;
    for (size_t i = 0; i < prompt.size(); ++i)
        b.add(prompt[i], (engine::Pos)i, {seq}, i + 1 == prompt.size());
    REQUIRE(ctx.decode(b) == engine::Context::Status::Ok);
    const float* logits = ctx.logits(prompt.size() - 1);
    std::vector<engine::Token> out;
    engine::Pos pos = (engine::Pos)prompt.size();
    while ((int)out.size() < n) {
        const engine::Token t = argmax(logits, ctx.n_vocab());
        if (ctx.model().vocab().is_eog(t)) break;
        out.push_back(t);
        if ((int)out.size() == n) break;
        b.clear();
        b.add(t, pos++, {seq}, true);
        REQUIRE(ctx.decode(b) == engine::Context::Status::Ok);
        logits = ctx.logits(0);
    }
    return out;
}

// Logits of every position of the first golden case (prompt + completion), computed in one batch with
// the given context parameters (n_ctx, threads, attention path, micro-batch, cache types).
inline std::vector<float> first_case_logits(const engine::Model& model, const nlohmann::json& golden,
                                            const engine::ContextParams& cp) {
    engine::Context ctx(model, cp);
    const auto& c = golden["cases"][0];
    std::vector<engine::Token> all = c["prompt_tokens"].get<std::vector<engine::Token>>();
    for (engine::Token t : c["completion_tokens"].get<std::vector<engine::Token>>()) all.push_back(t);
    engine::Batch b;
    for (size_t i = 0; i < all.size(); ++i) b.add(all[i], (engine::Pos)i, {0}, true);
    REQUIRE(ctx.decode(b) == engine::Context::Status::Ok);
    std::vector<float> out;
    for (size_t i = 0; i < all.size(); ++i)
        out.insert(out.end(), ctx.logits(i), ctx.logits(i) + ctx.n_vocab());
    return out;
}

// Teacher forcing: evaluate prompt + reference completion in one batch and compare log-probabilities
// of the reference's top-5 ids at every generated position. Besides the per-id tolerance, the mean
// |delta| is bounded: a systematic difference (say, unquantized activations, or attention weights not
// rounded like the reference's) moves the mean to ~3e-3 while leaving the worst case near tolerance.
// Greedy picks must match where the reference's top-1 leads by more than greedy_margin. Returns the
// worst |delta|. model_params places the weights (offload tests).
inline double check_teacher_forced(const std::string& name, double tol, double mean_tol, bool flash_attn,
                                   int threads, ggml::Type type_k = ggml::Type::F16,
                                   ggml::Type type_v = ggml::Type::F16, double greedy_margin = 0.02,
                                   const engine::ModelParams& model_params = {}) {
    auto model = engine::Model::load(shared_path("models/synth/" + name + ".gguf"), model_params);
    const auto golden = load_golden(name + ".greedy.json");
    engine::ContextParams cp;
    cp.n_ctx = 256;
    cp.n_threads = cp.n_threads_batch = threads;
    cp.flash_attn = flash_attn;
    cp.type_k = type_k;
    cp.type_v = type_v;
    engine::Context ctx(*model, cp);
    const int n_vocab = ctx.n_vocab();
    double worst = 0, total = 0;
    int checked_greedy = 0, n_ids = 0;
    for (const auto& c : golden["cases"]) {
        const auto prompt = c["prompt_tokens"].get<std::vector<engine::Token>>();
        const auto completion = c["completion_tokens"].get<std::vector<engine::Token>>();
        REQUIRE(model->vocab().tokenize(c["prompt"].get<std::string>(), true, true) == prompt);
        std::vector<engine::Token> all = prompt;
        all.insert(all.end(), completion.begin(), completion.end());
        ctx.kv().clear();
        engine::Batch b;
        for (size_t i = 0; i < all.size(); ++i) b.add(all[i], (engine::Pos)i, {0}, i + 1 >= prompt.size());
        REQUIRE(ctx.decode(b) == engine::Context::Status::Ok);
        for (size_t k = 0; k < completion.size(); ++k) {
            const float* logits = ctx.logits(prompt.size() - 1 + k);
            double mx = -1e300, sum = 0;
            for (int i = 0; i < n_vocab; ++i) mx = std::max(mx, (double)logits[i]);
            for (int i = 0; i < n_vocab; ++i) sum += std::exp(logits[i] - mx);
            const double lse = mx + std::log(sum);
            const auto& top = c["top_logprobs"][k];
            for (const auto& e : top) {
                const double mine = logits[e["id"].get<int>()] - lse;
                const double d = std::fabs(mine - e["logprob"].get<double>());
                worst = std::max(worst, d);
                total += d;
                ++n_ids;
                INFO(name << " case '" << c["prompt"].get<std::string>() << "' position " << k << " id "
                          << e["id"]);
                REQUIRE(d <= tol);
            }
            if (top[0]["logprob"].get<double>() - top[1]["logprob"].get<double>() > greedy_margin) {
                ++checked_greedy;
                REQUIRE(argmax(logits, n_vocab) == top[0]["id"].get<int>());
            }
        }
    }
    const double mean = total / n_ids;
    WARN(name << (flash_attn ? " (fa)" : "") << " cache " << ggml::type_name(type_k) << "/"
              << ggml::type_name(type_v) << ": worst |delta logprob| " << worst << ", mean " << mean << ", "
              << checked_greedy << " greedy positions checked");
    REQUIRE(mean <= mean_tol);
    return worst;
}
