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

// Teacher forcing: evaluate prompt + reference completion in one batch and compare log-probabilities
// of the reference's top-5 ids at every generated position.
void check_teacher_forced(const std::string& name, double tol, bool flash_attn, int threads) {
    auto model = Model::load(shared_path("models/synth/" + name + ".gguf"));
    const auto golden = load_golden(name + ".greedy.json");
    ContextParams cp;
    cp.n_ctx = 256;
    cp.n_threads = cp.n_threads_batch = threads;
    cp.flash_attn = flash_attn;
    Context ctx(*model, cp);
    const int n_vocab = ctx.n_vocab();
    double worst = 0;
    int checked_greedy = 0;
    for (const auto& c : golden["cases"]) {
        const auto prompt = c["prompt_tokens"].get<std::vector<Token>>();
        const auto completion = c["completion_tokens"].get<std::vector<Token>>();
        REQUIRE(model->vocab().tokenize(c["prompt"].get<std::string>(), true, true) == prompt);
        std::vector<Token> all = prompt;
        all.insert(all.end(), completion.begin(), completion.end());
        ctx.kv().clear();
        Batch b;
        for (size_t i = 0; i < all.size(); ++i) b.add(all[i], (Pos)i, {0}, i + 1 >= prompt.size());
        REQUIRE(ctx.decode(b) == Context::Status::Ok);
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
                INFO(name << " case '" << c["prompt"].get<std::string>() << "' position " << k << " id " << e["id"]);
                REQUIRE(d <= tol);
            }
            if (top[0]["logprob"].get<double>() - top[1]["logprob"].get<double>() > 0.02) {
                ++checked_greedy;
                REQUIRE(argmax(logits, n_vocab) == top[0]["id"].get<int>());
            }
        }
    }
    WARN(name << (flash_attn ? " (fa)" : "") << ": worst |delta logprob| " << worst << ", " << checked_greedy
              << " greedy positions checked");
}

}  // namespace

TEST_CASE("synth-tiny f16 teacher-forced logprobs within 0.01", "[model][golden]") {
    check_teacher_forced("synth-tiny-f16", 0.01, false, 2);
    check_teacher_forced("synth-tiny-f16", 0.01, true, 1);
}
TEST_CASE("synth-tiny q8_0 teacher-forced logprobs within 0.01", "[model][golden]") {
    check_teacher_forced("synth-tiny-q8_0", 0.01, false, 2);
    check_teacher_forced("synth-tiny-q8_0", 0.01, true, 1);
}
TEST_CASE("synth-tiny q4_0 teacher-forced logprobs within 0.02", "[model][golden]") {
    check_teacher_forced("synth-tiny-q4_0", 0.02, false, 2);
    check_teacher_forced("synth-tiny-q4_0", 0.02, true, 1);
}
TEST_CASE("synth-tiny q4_k teacher-forced logprobs within 0.02", "[model][golden]") {
    check_teacher_forced("synth-tiny-q4_k", 0.02, false, 2);
    check_teacher_forced("synth-tiny-q4_k", 0.02, true, 1);
}
