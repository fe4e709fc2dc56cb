// Model outputs against llama.cpp's reference outputs (../shared/golden).
#include <catch2/catch.hpp>
#include <cmath>

#include "golden_util.h"

using namespace engine;

TEST_CASE("stories260K greedy completions match the reference token for token", "[model][golden]") {
    auto model = Model::load(shared_path("models/stories260K.gguf"));
    const auto golden = load_golden("stories260K.greedy.json");
    for (int threads : {1, 2}) {
        for (bool fa : {false, true}) {
            ContextParams cp;
            cp.n_ctx = 512;
            cp.n_threads = cp.n_threads_batch = threads;
            cp.flash_attn = fa;
            cp.n_ubatch = 3;  // prompts are split over several micro-batches
            Context ctx(*model, cp);
            for (const auto& c : golden["cases"]) {
                INFO("prompt '" << c["prompt"].get<std::string>() << "' threads " << threads << " fa " << fa);
                const auto prompt = model->vocab().tokenize(c["prompt"].get<std::string>(), true, true);
                REQUIRE(prompt == c["prompt_tokens"].get<std::vector<Token>>());
                const auto want = c["completion_tokens"].get<std::vector<Token>>();
                ctx.kv().clear();
                REQUIRE(greedy(ctx, prompt, (int)want.size()) == want);
            }
        }
    }
}

namespace {

// Logits of every position of the first golden case, computed in one batch.
std::vector<float> case_logits(const Model& model, const nlohmann::json& golden, bool flash_attn,
                               uint32_t n_ubatch) {
    ContextParams cp;
    cp.n_ctx = 256;
    cp.n_threads = cp.n_threads_batch = 2;
    cp.flash_attn = flash_attn;
    cp.n_ubatch = n_ubatch;
    return first_case_logits(model, golden, cp);
}

}  // namespace

TEST_CASE("synth-tiny f16 teacher-forced logprobs within 0.01", "[model][golden]") {
    check_teacher_forced("synth-tiny-f16", 0.01, 3e-4, false, 2);
    check_teacher_forced("synth-tiny-f16", 0.01, 3e-4, true, 1);
}
TEST_CASE("synth-tiny q8_0 teacher-forced logprobs within 0.01", "[model][golden]") {
    check_teacher_forced("synth-tiny-q8_0", 0.01, 2e-3, false, 2);
    check_teacher_forced("synth-tiny-q8_0", 0.01, 2e-3, true, 1);
}
TEST_CASE("synth-tiny q4_0 teacher-forced logprobs within 0.02", "[model][golden]") {
    check_teacher_forced("synth-tiny-q4_0", 0.02, 2e-3, false, 2);
    check_teacher_forced("synth-tiny-q4_0", 0.02, 2e-3, true, 1);
}
TEST_CASE("synth-tiny q4_k teacher-forced logprobs within 0.02", "[model][golden]") {
    check_teacher_forced("synth-tiny-q4_k", 0.02, 2e-3, false, 2);
    check_teacher_forced("synth-tiny-q4_k", 0.02, 2e-3, true, 1);
}

// A q8_0 rounding flip anywhere moves the logits by ~1e-2, so "close" is meaningless here: flash
// attention must reproduce the unfused path's float steps exactly, whatever the micro-batching.
TEST_CASE("flash attention gives the unfused path's logits bit for bit", "[model][attention]") {
    auto model = Model::load(shared_path("models/synth/synth-tiny-q8_0.gguf"));
    const auto golden = load_golden("synth-tiny-q8_0.greedy.json");
    const auto unfused = case_logits(*model, golden, false, 512);
    REQUIRE(case_logits(*model, golden, true, 512) == unfused);
    REQUIRE(case_logits(*model, golden, true, 5) == unfused);
}
