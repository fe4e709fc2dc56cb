// Shared helpers of the model tests: paths, golden files, greedy generation in-process.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/context.h"
#include "engine/model/model.h"
#include "engine/tokenizer/vocab.h"

inline std::string shared_path(const std::string& rel) { return std::string(GGSERVE_SHARED_DIR) + "/" + rel; }

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
inline std::vector<engine::Token> greedy(engine::Context& ctx, const std::vector<engine::Token>& prompt, int n,
                                         engine::SeqId seq = 0) {
    engine::Batch b;
    for (size_t i = 0; i < prompt.size(); ++i) b.add(prompt[i], (engine::Pos)i, {seq}, i + 1 == prompt.size());
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
