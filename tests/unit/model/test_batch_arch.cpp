// Batch invariance for every architecture row: a stream's greedy tokens (and logits, bit for bit) are the
// same decoded alone and beside three other streams and a long prefill in the same batches, through the
// sliding-window layers (the streams run past gemma's 16-position window) and the expert routing.
#include <catch2/catch.hpp>
#include <map>

#include "golden_util.h"
#include "synth_models.h"

using namespace engine;

namespace {

struct StreamResult {
    std::vector<Token> tokens;
    std::vector<std::vector<float>> logits;
};

// Greedy decoding of the given streams in lockstep: one batch with every prompt, then one token per
// stream per batch; with_prefill adds a long prompt in sequence 4 to the third decode batch.
std::map<int, StreamResult> run_streams(const Model& model, const std::vector<std::vector<Token>>& prompts,
                                        const std::vector<int>& streams, const std::vector<Token>& prefill,
                                        int n_gen) {
    ContextParams cp;
    cp.n_ctx = 1024;
    cp.n_seq_max = 5;
    cp.n_threads = cp.n_threads_batch = 2;
    Context ctx(model, cp);
    std::map<int, StreamResult> out;
    std::map<int, Pos> pos;
    std::map<int, int> row;  // the batch row holding each stream's logits
    Batch b;
    for (int s : streams) {
        for (size_t i = 0; i < prompts[s].size(); ++i)
            b.add(prompts[s][i], (Pos)i, {s}, i + 1 == prompts[s].size());
        row[s] = (int)b.size() - 1;
        pos[s] = (Pos)prompts[s].size();
    }
    for (int step = 0; step < n_gen; ++step) {
        REQUIRE(ctx.decode(b) == Context::Status::Ok);
        std::map<int, Token> next;
        for (int s : streams) {
            const float* l = ctx.logits(row[s]);
            out[s].logits.emplace_back(l, l + ctx.n_vocab());
            next[s] = argmax(l, ctx.n_vocab());
            out[s].tokens.push_back(next[s]);
        }
        b.clear();
        if (step == 2)
            for (size_t i = 0; i < prefill.size(); ++i)
                b.add(prefill[i], (Pos)i, {4}, i + 1 == prefill.size());
        for (int s : streams) {
            row[s] = (int)b.size();
            b.add(next[s], pos[s]++, {s}, true);
        }
    }
    return out;
}

void check_batch_invariance(const std::string& name) {
    auto model = Model::load(arch_model_path(name));
    const auto golden = load_arch_golden(name);
    std::vector<std::vector<Token>> prompts;
    for (const auto& c : golden["cases"]) prompts.push_back(c["prompt_tokens"].get<std::vector<Token>>());
    std::vector<Token> prefill = prompts.back();  // the 50-token prompt, twice: beyond every window
    prefill.insert(prefill.end(), prompts.back().begin(), prompts.back().end());
    const int n_gen = 24;
    const auto together = run_streams(*model, prompts, {0, 1, 2, 3}, prefill, n_gen);
    for (int s : {0, 1, 2, 3}) {
        INFO(name << " stream " << s);
        const auto alone = run_streams(*model, prompts, {s}, {}, n_gen);
        REQUIRE(alone.at(s).tokens == together.at(s).tokens);
        REQUIRE(alone.at(s).logits == together.at(s).logits);
    }
}

}  // namespace

TEST_CASE("architectures are batch invariant: greedy tokens alone and beside other streams",
          "[model][arch][invariance]") {
    for (const char* name : {"synth-llama-yarn-q8_0", "synth-llama-rope-freqs-q8_0", "synth-qwen2-q8_0",
                             "synth-qwen3-q4_k", "synth-phi3-q8_0", "synth-gemma2-q8_0", "synth-gemma3-q8_0",
                             "synth-llama-moe-q8_0", "synth-qwen3moe-q8_0", "synth-qwen2moe-q8_0",
                             "synth-gemma-q8_0", "synth-gpt-oss-mxfp4"})
        check_batch_invariance(name);
}
