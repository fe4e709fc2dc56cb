// Position shifts of cached sequences: after seq_add the stored keys are re-rotated (K-shift) before
// the next compute, so a shifted context continues exactly like a fresh evaluation of the same
// tokens at the new positions.
#include <catch2/catch.hpp>
#include <cstring>

#include "engine/model/kv_shift.h"
#include "seq_util.h"

using namespace engine;

namespace {

// Evaluates prompt + n_gen greedy tokens, shifts the context (keeping n_keep), continues n_after tokens,
// and returns them with the same n_after tokens from a fresh evaluation of the kept + remaining tokens.
// The kept tokens' keys and values in layers above the first were computed while the discarded tokens
// were still there, so the logits differ from the fresh ones; the greedy tokens are expected to agree.
std::pair<std::vector<Token>, std::vector<Token>> shift_and_continue(const Model& model,
                                                                     const ContextParams& cp,
                                                                     const std::vector<Token>& prompt,
                                                                     int n_gen, int32_t n_keep, int n_after) {
    Context ctx(model, cp);
    std::vector<float> logits = eval_seq(ctx, 0, prompt, 0);
    const std::vector<Token> gen = greedy_from(ctx, 0, logits, (Pos)prompt.size(), n_gen);
    std::vector<Token> cached = prompt;  // what the cache holds: every generated token but the last
    cached.insert(cached.end(), gen.begin(), gen.end() - 1);
    REQUIRE(ctx.kv().seq_pos_max(0) == (Pos)cached.size() - 1);

    const int32_t discarded = shift_context(ctx.kv(), 0, cached, n_keep);
    REQUIRE(discarded == ((int32_t)prompt.size() + n_gen - 1 - n_keep) / 2);
    REQUIRE(ctx.kv().seq_pos_max(0) == (Pos)cached.size() - 1);
    REQUIRE(ctx.kv().has_shift());
    logits = eval_seq(ctx, 0, {gen.back()}, (Pos)cached.size());
    REQUIRE_FALSE(ctx.kv().has_shift());
    cached.push_back(gen.back());
    const auto shifted = greedy_from(ctx, 0, logits, (Pos)cached.size(), n_after);

    Context fresh(model, cp);
    return {shifted, greedy_from(fresh, 0, eval_seq(fresh, 0, cached, 0), (Pos)cached.size(), n_after)};
}

// Keys of seq's cells (ordered by position) of every layer, dequantized.
std::vector<std::vector<float>> keys(Context& ctx, SeqId seq) {
    std::vector<std::vector<float>> out;
    KvCache& kv = ctx.kv();
    const auto to_float = ggml::type_traits(kv.type_k()).to_float;
    for (int il = 0; il < kv.n_layer(); ++il) {
        ggml::Tensor* k = kv.k(il);
        std::vector<char> row(k->nb[1]);
        for (int32_t c : kv.seq_cells(seq)) {
            ggml::tensor_get(k, row.data(), (size_t)c * k->nb[1], row.size());
            std::vector<float> f((size_t)k->ne[0]);
            if (kv.type_k() == ggml::Type::F32)
                std::memcpy(f.data(), row.data(), row.size());
            else
                to_float(row.data(), f.data(), k->ne[0]);
            out.push_back(std::move(f));
        }
    }
    return out;
}

}  // namespace

TEST_CASE("K-shift: keys moved by seq_add equal the keys computed at the new positions",
          "[model][kv][shift]") {
    // RoPE attention depends on relative positions only, so the same tokens evaluated at positions
    // d.. and moved by -d must hold the keys (every layer) and give the logits of an evaluation at 0..
    // Bounds: relative to each row's largest key, about one rounding or quantization step of the type.
    const struct {
        const char* model;
        const char* type;
        double key_tol, logprob_tol;
        bool fa;
    } cases[] = {{"stories260K.gguf", "f32", 1e-5, 1e-3, false},
                 {"stories260K.gguf", "f16", 2e-3, 2e-2, false},
                 {"stories260K.gguf", "bf16", 1.6e-2, 8e-2, true},
                 {"synth/synth-tiny-f16.gguf", "f16", 2e-3, 1e-2, true},
                 {"synth/synth-tiny-f16.gguf", "q8_0", 2e-2, 2e-2, true},
                 {"synth/synth-tiny-f16.gguf", "q5_0", 0.1, 0.03, true},
                 {"synth/synth-tiny-f16.gguf", "q5_1", 0.1, 0.03, true},
                 {"synth/synth-tiny-f16.gguf", "q4_0", 0.2, 0.06, true},
                 {"synth/synth-tiny-f16.gguf", "q4_1", 0.2, 0.06, true},
                 {"synth/synth-tiny-f16.gguf", "iq4_nl", 0.25, 0.06, true},
                 // the architecture rows' RoPE: YaRN (the magnitude factor is not applied twice),
                 // frequency factors, NEOX, fused QKV, per-layer bases and scales (gemma3)
                 {"synth/synth-llama-yarn-q8_0.gguf", "f32", 2e-5, 0.05, false},
                 {"synth/synth-llama-rope-freqs-q8_0.gguf", "f32", 2e-5, 0.05, true},
                 {"synth/synth-qwen2-q8_0.gguf", "f32", 2e-5, 0.05, false},
                 {"synth/synth-phi3-q8_0.gguf", "f32", 2e-5, 0.05, true},
                 {"synth/synth-gemma3-q8_0.gguf", "f32", 2e-5, 0.05, false}};
    const auto golden = load_golden("stories260K.greedy.json");
    const auto tokens = golden["cases"][4]["prompt_tokens"].get<std::vector<Token>>();
    for (const auto& c : cases) {
        auto model = Model::load(shared_path(std::string("models/") + c.model));
        for (Pos shift : {17, -20}) {  // the tokens start at position 20
            INFO(c.model << " cache " << c.type << " moved by " << shift);
            ContextParams cp;
            cp.n_ctx = 256;
            cp.n_threads = cp.n_threads_batch = 2;
            cp.flash_attn = c.fa;
            ggml::type_from_name(c.type, &cp.type_k);
            cp.type_v = c.fa ? cp.type_k : ggml::Type::F16;
            Context moved(*model, cp), fresh(*model, cp);
            const Pos start = 20;
            eval_seq(moved, 0, std::vector<Token>(tokens.begin(), tokens.end() - 1), start);
            moved.kv().seq_add(0, 0, -1, shift);
            moved.apply_kv_shift();
            eval_seq(fresh, 0, std::vector<Token>(tokens.begin(), tokens.end() - 1), start + shift);
            const auto ka = keys(moved, 0), kb = keys(fresh, 0);
            REQUIRE(ka.size() == kb.size());
            double worst = 0;
            for (size_t r = 0; r < ka.size(); ++r) {
                float mx = 1e-6f;
                for (float v : kb[r]) mx = std::max(mx, std::fabs(v));
                for (size_t i = 0; i < ka[r].size(); ++i)
                    worst = std::max(worst, (double)std::fabs(ka[r][i] - kb[r][i]) / mx);
            }
            const Pos next = start + shift + (Pos)tokens.size() - 1;
            const double dl = top_logprob_delta(eval_seq(moved, 0, {tokens.back()}, next),
                                                eval_seq(fresh, 0, {tokens.back()}, next));
            INFO("worst relative key error " << worst << ", logprob delta " << dl);
            REQUIRE(worst <= c.key_tol);
            REQUIRE(dl <= c.logprob_tol);
        }
    }
}

TEST_CASE("stories260K: after a context shift the next tokens equal a fresh evaluation",
          "[model][kv][shift]") {
    auto model = Model::load(shared_path("models/stories260K.gguf"));
    const auto golden = load_golden("stories260K.greedy.json");
    for (const char* type : {"f32", "f16", "bf16"})
        for (bool fa : {false, true})
            for (int c = 0; c < 3; ++c) {
                INFO("cache " << type << " fa " << fa << " case " << c);
                ContextParams cp;
                cp.n_ctx = 256;
                cp.n_threads = cp.n_threads_batch = 2;
                cp.flash_attn = fa;
                ggml::type_from_name(type, &cp.type_k);
                ggml::type_from_name(type, &cp.type_v);
                const auto prompt = golden["cases"][c]["prompt_tokens"].get<std::vector<Token>>();
                const auto [shifted, fresh] = shift_and_continue(*model, cp, prompt, 120, 1, 4);
                REQUIRE(shifted == fresh);
            }
}

TEST_CASE("stories260K: n_keep beyond BOS keeps the prompt's head in place", "[model][kv][shift]") {
    auto model = Model::load(shared_path("models/stories260K.gguf"));
    const auto golden = load_golden("stories260K.greedy.json");
    ContextParams cp;
    cp.n_ctx = 256;
    cp.n_threads = cp.n_threads_batch = 2;
    const auto prompt = golden["cases"][0]["prompt_tokens"].get<std::vector<Token>>();
    const auto [shifted, fresh] = shift_and_continue(*model, cp, prompt, 100, (int32_t)prompt.size(), 4);
    REQUIRE(shifted == fresh);
}

TEST_CASE("shifting a sequence that shares its cells leaves the other sequence's output unchanged",
          "[model][kv][shift]") {
    auto model = Model::load(shared_path("models/stories260K.gguf"));
    const auto golden = load_golden("stories260K.greedy.json");
    const auto& c = golden["cases"][1];
    const auto prompt = c["prompt_tokens"].get<std::vector<Token>>();
    const auto want = c["completion_tokens"].get<std::vector<Token>>();
    REQUIRE(want.size() > 60);
    ContextParams cp;
    cp.n_ctx = 512;
    cp.n_seq_max = 2;
    cp.n_threads = cp.n_threads_batch = 2;
    Context ctx(*model, cp);
    std::vector<Token> gen = greedy_from(ctx, 0, eval_seq(ctx, 0, prompt, 0), (Pos)prompt.size(), 40);
    REQUIRE(std::equal(gen.begin(), gen.end(), want.begin()));
    std::vector<Token> cached = prompt;
    cached.insert(cached.end(), gen.begin(), gen.end() - 1);

    ctx.kv().seq_cp(0, 1, 0, -1);
    const uint32_t used = ctx.kv().n_used();
    std::vector<Token> copy = cached;
    const int32_t discarded = shift_context(ctx.kv(), 1, copy, 1);
    REQUIRE(ctx.kv().n_used() ==
            used + (uint32_t)(cached.size() - 1 - (size_t)discarded));  // moved cells copied
    greedy_from(ctx, 1, eval_seq(ctx, 1, {gen.back()}, (Pos)copy.size()), (Pos)copy.size() + 1, 8);

    // Sequence 0 continues from its untouched cells exactly as the reference does.
    const auto rest = greedy_from(ctx, 0, eval_seq(ctx, 0, {gen.back()}, (Pos)cached.size()),
                                  (Pos)cached.size() + 1, (int)want.size() - 40);
    REQUIRE(std::equal(rest.begin(), rest.end(), want.begin() + 40));
}
