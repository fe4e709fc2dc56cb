// The bert row and the embeddings API against ../shared/golden/synth-bert-f16.embeddings.json (a recent
// llama.cpp's /embedding with --pooling mean, cls and none): cosine similarity >= 0.999 (the golden
// README's tolerance) for the pooled vectors and every token's hidden state; the same vectors for an input
// alone and inside a batch of 32 mixed-length inputs; pooling and normalization on known vectors. The
// nomic-bert and jina-bert-v2 rows likewise against tests/fixtures/golden/<name>.embeddings.json (llama.cpp
// 0.7.0 on models the tests write, tests/fixtures/synth_arch.h), with last-token pooling too.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "encoder_fixture.h"
#include "engine/model/embeddings.h"
#include "engine/tokenizer/vocab.h"
#include "ggml/types.h"
#include "golden_util.h"
#include "synth_arch.h"

using namespace engine;
using encoder_test::cosine;
using encoder_test::encoder_fixture;
using encoder_test::EncoderFixture;

namespace {

ContextParams embd_params(uint32_t n_seq) {
    ContextParams cp;
    cp.n_ctx = 2048;
    cp.n_batch = cp.n_ubatch = 512;
    cp.n_seq_max = n_seq;
    cp.n_threads = cp.n_threads_batch = 2;
    return cp;
}

}  // namespace

TEST_CASE("nomic-bert and jina-bert-v2 (ALiBi): pooled and per-token embeddings match the llama.cpp golden",
          "[model][embeddings]") {
    for (const std::string name : {"synth-nomic-bert-q8_0", "synth-jina-bert-v2-q8_0"}) {
        const EncoderFixture& fx = encoder_fixture(name);
        INFO(name << ": the generator must write the file the golden was made from");
        REQUIRE(synth::fnv1a64_file(fx.path) == fx.golden["model_fnv1a64"].get<std::string>());
        auto model = Model::load(fx.path);
        REQUIRE(model->hparams().pooling_type == 1);  // mean, from the file
        REQUIRE_FALSE(model->hparams().causal);
        REQUIRE(model->pos_embd == nullptr);  // positions by RoPE or ALiBi
        // Every attention path: unfused and flash, one and two threads (ALiBi's per-head masks in both).
        for (auto [threads, flash] : {std::pair{1, false}, std::pair{2, false}, std::pair{2, true}}) {
            ContextParams cp = embd_params(4);
            cp.n_threads = cp.n_threads_batch = threads;
            cp.flash_attn = flash;
            Context ctx(*model, cp);
            double min_cs = 1;
            for (const auto& c : fx.golden["cases"]) {
                const auto tokens = c["tokens"].get<std::vector<Token>>();
                INFO("case '" << c["prompt"].get<std::string>() << "', " << threads << " threads, flash " << flash);
                REQUIRE(model->vocab().tokenize(c["prompt"].get<std::string>(), true, true) == tokens);
                for (auto [p, key] : {std::pair{Pooling::Mean, "mean"}, std::pair{Pooling::Cls, "cls"},
                                      std::pair{Pooling::Last, "last"}}) {
                    const auto got = embed(ctx, {tokens}, {p, 2, {}});
                    const double cs = cosine(got[0][0], c[key].get<std::vector<float>>());
                    INFO("pooling " << key);
                    CHECK(cs >= 0.999);
                    min_cs = std::min(min_cs, cs);
                }
                const auto rows = embed(ctx, {tokens}, {Pooling::None, 2, {}})[0];
                REQUIRE(rows.size() == c["hidden"].size());
                for (size_t t = 0; t < rows.size(); ++t) {
                    const double cs = cosine(rows[t], c["hidden"][t].get<std::vector<float>>());
                    CHECK(cs >= 0.999);
                    min_cs = std::min(min_cs, cs);
                }
            }
            WARN(name << ", " << threads << " threads, flash " << flash << ": min cosine " << min_cs);
        }
        // Batch invariance: an input alone equals the same input among mixed-length others.
        Context ctx(*model, embd_params(16));
        std::vector<std::vector<Token>> inputs;
        for (size_t i = 0; i < 16; ++i) {
            auto t = fx.golden["cases"][i % fx.golden["cases"].size()]["tokens"].get<std::vector<Token>>();
            t.resize(std::max<size_t>(2, t.size() - i / 8));
            inputs.push_back(t);
        }
        const auto batched = embed(ctx, inputs, {Pooling::Mean, 2, {}});
        for (size_t i = 0; i < inputs.size(); ++i) {
            INFO(name << " input " << i);
            REQUIRE(embed(ctx, {inputs[i]}, {Pooling::Mean, 2, {}})[0] == batched[i]);
        }
    }
}

TEST_CASE("bert: pooled (mean, cls) and per-token embeddings match the llama.cpp golden",
          "[model][embeddings]") {
    auto model = Model::load(shared_path("models/synth/synth-bert-f16.gguf"));
    REQUIRE(model->hparams().pooling_type == 2);  // cls, from the file
    REQUIRE_FALSE(model->hparams().causal);
    const auto golden = load_golden("synth-bert-f16.embeddings.json");
    Context ctx(*model, embd_params(4));
    double min_mean = 1, min_cls = 1, min_tok = 1;
    for (const auto& c : golden["cases"]) {
        const auto tokens = c["tokens"].get<std::vector<Token>>();
        INFO("case '" << c["prompt"].get<std::string>() << "'");
        REQUIRE(model->vocab().tokenize(c["prompt"].get<std::string>(), true, true) == tokens);
        for (auto [p, key] : {std::pair{Pooling::Mean, "mean"}, std::pair{Pooling::Cls, "cls"}}) {
            const auto got = embed(ctx, {tokens}, {p, 2, {}});
            REQUIRE(got.size() == 1);
            REQUIRE(got[0].size() == 1);
            const double cs = cosine(got[0][0], c[key].get<std::vector<float>>());
            CHECK(cs >= 0.999);
            (p == Pooling::Mean ? min_mean : min_cls) = std::min(p == Pooling::Mean ? min_mean : min_cls, cs);
        }
        const auto rows = embed(ctx, {tokens}, {Pooling::None, 2, {}})[0];
        const auto& hidden = c["hidden"];
        REQUIRE(rows.size() == tokens.size());
        REQUIRE(hidden.size() == tokens.size());
        for (size_t t = 0; t < rows.size(); ++t) {
            const double cs = cosine(rows[t], hidden[t].get<std::vector<float>>());
            CHECK(cs >= 0.999);
            min_tok = std::min(min_tok, cs);
        }
    }
    WARN("min cosine: mean " << min_mean << ", cls " << min_cls << ", per token " << min_tok);
    // the model's own pooling (cls) when the request names none
    const auto c0 = golden["cases"][0];
    const auto dflt = embed(ctx, {c0["tokens"].get<std::vector<Token>>()}, {});
    CHECK(cosine(dflt[0][0], c0["cls"].get<std::vector<float>>()) >= 0.999);
}

TEST_CASE("embeddings: an input alone equals the same input in a batch of 32 mixed-length inputs",
          "[model][embeddings]") {
    auto model = Model::load(shared_path("models/synth/synth-bert-f16.gguf"));
    Context ctx(*model, embd_params(32));
    const auto golden = load_golden("synth-bert-f16.embeddings.json");
    std::vector<std::vector<Token>> inputs;
    for (int i = 0; i < 32; ++i) {
        auto t = golden["cases"][i % golden["cases"].size()]["tokens"].get<std::vector<Token>>();
        t.resize(std::max<size_t>(2, t.size() - (size_t)(i / 8)));  // mixed lengths
        inputs.push_back(t);
    }
    for (Pooling p : {Pooling::Mean, Pooling::Cls, Pooling::None}) {
        const auto batched = embed(ctx, inputs, {p, 2, {}});
        REQUIRE(batched.size() == inputs.size());
        for (size_t i = 0; i < inputs.size(); ++i) {
            const auto alone = embed(ctx, {inputs[i]}, {p, 2, {}});
            INFO("input " << i << " pooling " << pooling_name(p));
            REQUIRE(alone[0] == batched[i]);  // bit for bit
        }
    }
    REQUIRE(ctx.kv().n_used() == 0);  // every cell released
}

TEST_CASE("embeddings: bad input is refused clearly", "[model][embeddings]") {
    auto model = Model::load(shared_path("models/synth/synth-bert-f16.gguf"));
    ContextParams cp = embd_params(2);
    cp.n_ubatch = 16;
    Context ctx(*model, cp);
    REQUIRE(max_embed_tokens(ctx) == 16);
    REQUIRE(max_embed_tokens(*model, 512, 100) == 100);  // the context bounds it too
    CHECK_THAT(embed_too_long(101, *model, 512, 100), Catch::Contains("raise -c"));
    CHECK_THAT(embed_too_long(3000, *model, 4096, 0), Catch::Contains("training context"));
    CHECK_THROWS_AS(embed(ctx, {{}}, {}), InvalidBatch);
    CHECK_THROWS_WITH(embed(ctx, {std::vector<Token>(17, 100)}, {}), Catch::Contains("raise -ub"));
    CHECK_THROWS_AS(embed(ctx, {{101, (Token)model->hparams().n_vocab, 102}}, {}), InvalidBatch);
    CHECK_THROWS_WITH(embed(ctx, {{101, 102}}, {Pooling::Rank, 2, {}}),
                      Catch::Contains("classification head"));
    REQUIRE(ctx.kv().n_used() == 0);
    // a generation model is not an embedding model
    auto llama = Model::load(shared_path("models/synth/synth-qwen2-q8_0.gguf"));
    Context lctx(*llama, cp);
    CHECK_THROWS_WITH(embed(lctx, {{1, 2}}, {}), Catch::Contains("not an embedding"));
}

TEST_CASE("rank pooling: a reranker's head (cls + tanh, cls.output) on the [CLS] hidden state",
          "[model][embeddings]") {
    // synth-bert with a random classification head written into a copy (f32 weights: an exact reference)
    auto f = ggml::gguf::File::open(shared_path("models/synth/synth-bert-f16.gguf"));
    const int64_t E = 128, n_out = 2;
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.0f, 0.3f);
    std::vector<float> cls(E * E), cls_b(E), out(E * n_out), out_b(n_out);
    for (auto* v : {&cls, &cls_b, &out, &out_b})
        for (float& x : *v) x = nd(rng);
    ggml::gguf::Writer w;
    w.set_alignment(f->alignment());
    for (const auto& [k, v] : f->metadata()) w.set(k, v);
    for (const auto& t : f->tensors()) w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data, t.size);
    const int64_t ne_cls[2] = {E, E}, ne_out[2] = {E, n_out};
    w.add_tensor("cls.weight", ggml::Type::F32, 2, ne_cls, cls.data(), cls.size() * 4);
    w.add_tensor("cls.bias", ggml::Type::F32, 1, &E, cls_b.data(), cls_b.size() * 4);
    w.add_tensor("cls.output.weight", ggml::Type::F32, 2, ne_out, out.data(), out.size() * 4);
    w.add_tensor("cls.output.bias", ggml::Type::F32, 1, &n_out, out_b.data(), out_b.size() * 4);
    const std::string path =
        (std::filesystem::temp_directory_path() / ("ggserve-rerank-" + std::to_string(getpid()) + ".gguf"))
            .string();
    w.write(path);
    auto model = Model::load(path);
    std::filesystem::remove(path);
    REQUIRE(model->cls_out != nullptr);
    Context ctx(*model, embd_params(4));
    const std::vector<std::vector<Token>> inputs = {
        {101, 2320, 2588, 102}, {101, 2051, 102, 1037, 102}, {101, 102}};
    const auto scores = embed(ctx, inputs, {Pooling::Rank, 2, {}});
    for (size_t i = 0; i < inputs.size(); ++i) {
        const auto h = embed(ctx, {inputs[i]}, {Pooling::Cls, -1, {}})[0][0];  // raw [CLS] state
        std::vector<double> x(E);
        for (int64_t r = 0; r < E; ++r) {
            double s = cls_b[r];
            for (int64_t c = 0; c < E; ++c) s += (double)cls[r * E + c] * h[c];
            x[r] = std::tanh(s);
        }
        REQUIRE(scores[i].size() == 1);
        REQUIRE(scores[i][0].size() == (size_t)n_out);
        for (int64_t o = 0; o < n_out; ++o) {
            double want = out_b[o];
            for (int64_t c = 0; c < E; ++c) want += (double)out[o * E + c] * x[c];
            CHECK(scores[i][0][o] == Approx(want).margin(1e-4));
        }
    }
    CHECK(scores[0][0] != scores[1][0]);
}

TEST_CASE("a decoder as an embedder: hidden states that give its logits, last pooling batch-invariant",
          "[model][embeddings]") {
    auto model = Model::load(shared_path("models/synth/synth-qwen2-q8_0.gguf"));
    const auto golden = load_golden("synth-qwen2-q8_0.greedy.json");
    const auto tokens = golden["cases"][0]["prompt_tokens"].get<std::vector<Token>>();
    ContextParams cp = embd_params(4);
    cp.embeddings = true;
    Context ectx(*model, cp);
    REQUIRE(ectx.out_width() == model->hparams().n_embd);
    const auto rows = embed(ectx, {tokens}, {Pooling::None, 2, {}})[0];
    REQUIRE(rows.size() == tokens.size());
    // the same tokens through a generation context: logits = output (tied token embeddings) x hidden state
    Context gctx(*model, embd_params(1));
    Batch b;
    for (size_t i = 0; i < tokens.size(); ++i) b.add(tokens[i], (Pos)i, {0}, true);
    REQUIRE(gctx.decode(b) == Context::Status::Ok);
    // each logit is the scalar reference dot product of the output row with the hidden state quantized to
    // the weight's paired activation type, as mul_mat computes it: only the summation order differs
    const ggml::Tensor* w = model->output;
    const auto& tr = ggml::type_traits(w->type);
    const int64_t E = w->ne[0];
    std::vector<uint8_t> qh((size_t)(E / ggml::block_size(tr.vec_dot_type)) *
                            ggml::type_size(tr.vec_dot_type));
    double max_diff = 0;
    for (size_t t = 0; t < tokens.size(); t += 3) {
        ggml::type_traits(tr.vec_dot_type).from_float_ref(rows[t].data(), qh.data(), E);
        for (int64_t v = 0; v < w->ne[1]; v += 7) {
            float s = 0;
            tr.vec_dot_ref(E, &s, (const char*)w->data + v * w->nb[1], qh.data());
            max_diff = std::max(max_diff, (double)std::fabs(s - gctx.logits(t)[v]));
        }
    }
    WARN("max |logit from the hidden state - logit| " << max_diff);
    CHECK(max_diff < 1e-3);
    // last pooling: an input alone equals the same input in a batch
    std::vector<std::vector<Token>> inputs;
    for (const auto& c : golden["cases"]) inputs.push_back(c["prompt_tokens"].get<std::vector<Token>>());
    const auto batched = embed(ectx, inputs, {Pooling::Last, 2, {}});
    for (size_t i = 0; i < inputs.size(); ++i)
        REQUIRE(embed(ectx, {inputs[i]}, {Pooling::Last, 2, {}})[0] == batched[i]);
    double norm = 0;
    for (float x : batched[0][0]) norm += (double)x * x;
    CHECK(norm == Approx(1.0).epsilon(1e-5));
}

TEST_CASE("pooling and embd_normalize on known vectors", "[model][embeddings][pooling]") {
    const std::vector<float> rows = {1, -2, 3, 4, 0, -1};  // 3 tokens x 2
    CHECK(pool_rows(rows.data(), 3, 2, Pooling::Mean) ==
          std::vector<float>{(1 + 3 + 0) / 3.0f, (-2 + 4 - 1) / 3.0f});
    CHECK(pool_rows(rows.data(), 3, 2, Pooling::Cls) == std::vector<float>{1, -2});
    CHECK(pool_rows(rows.data(), 3, 2, Pooling::Last) == std::vector<float>{0, -1});
    CHECK_THROWS(pool_rows(rows.data(), 3, 2, Pooling::None));
    auto norm = [](std::vector<float> v, int n) {
        normalize_embedding(v, n);
        return v;
    };
    const std::vector<float> v = {3, -4};
    CHECK(norm(v, -1) == v);
    auto approx = [](const std::vector<float>& a, const std::vector<double>& b) {
        REQUIRE(a.size() == b.size());
        for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-6));
    };
    approx(norm(v, 0), {3 * 32760.0 / 4, -32760.0});
    approx(norm(v, 1), {3 / 7.0, -4 / 7.0});
    approx(norm(v, 2), {0.6, -0.8});
    const auto p3 = norm(v, 3);
    const double n3 = std::cbrt(27.0 + 64.0);
    CHECK(p3[0] == Approx(3 / n3));
    CHECK(p3[1] == Approx(-4 / n3));
    CHECK(norm({0, 0}, 2) == std::vector<float>{0, 0});
    CHECK(parse_pooling("cls") == Pooling::Cls);
    CHECK_FALSE(parse_pooling("max").has_value());
}

TEST_CASE("a decoder's hidden states beside other tokens' logits in one decode call equal each computed alone",
          "[model][embeddings]") {
    auto model = Model::load(shared_path("models/stories260K.gguf"));
    const std::vector<Token> gen = model->vocab().tokenize("Once upon a time there was", true, true);
    const std::vector<Token> emb = model->vocab().tokenize("The little dog ran to the park", true, true);
    const size_t n_vocab = (size_t)model->hparams().n_vocab, n_embd = model->hparams().n_embd;
    // The references: the generation tokens' logits alone, the input's hidden states in an embeddings context.
    ContextParams ref = embd_params(4);
    Context alone(*model, ref);
    Batch b0;
    for (size_t i = 0; i < gen.size(); ++i) b0.add(gen[i], (Pos)i, {0}, i + 2 >= gen.size());
    REQUIRE(alone.decode(b0) == Context::Status::Ok);
    std::vector<std::vector<float>> want_logits;
    for (size_t i = gen.size() - 2; i < gen.size(); ++i)
        want_logits.emplace_back(alone.logits(i), alone.logits(i) + n_vocab);
    ref.embeddings = true;
    Context ectx(*model, ref);
    const auto want_mean = embed(ectx, {emb}, {Pooling::Mean, 2, {}})[0][0];
    const auto want_rows = embed(ectx, {emb}, {Pooling::None, 2, {}})[0];
    for (uint32_t n_ubatch : {512u, 4u}) {  // 4: the rows of both kinds spread over micro-batches
        ContextParams cp = embd_params(4);
        cp.n_ubatch = n_ubatch;

        // One call: the embedding input (sequence 1) first, then the generation tokens (sequence 0).
        Context ctx(*model, cp);
        Batch b;
        for (size_t i = 0; i < emb.size(); ++i) b.add_hidden(emb[i], (Pos)i, 1);
        for (size_t i = 0; i < gen.size(); ++i) b.add(gen[i], (Pos)i, {0}, i + 2 >= gen.size());
        REQUIRE(ctx.decode(b) == Context::Status::Ok);
        INFO("n_ubatch " << n_ubatch);
        for (size_t k = 0; k < 2; ++k) {
            const size_t i = emb.size() + gen.size() - 2 + k;
            REQUIRE(std::vector<float>(ctx.logits(i), ctx.logits(i) + n_vocab) == want_logits[k]);
        }
        std::vector<float> rows;
        for (size_t i = 0; i < emb.size(); ++i) {
            REQUIRE(std::vector<float>(ctx.hidden(i), ctx.hidden(i) + n_embd) == want_rows[i]);
            rows.insert(rows.end(), ctx.hidden(i), ctx.hidden(i) + n_embd);
        }
        REQUIRE(embedding_of_rows(*model, rows.data(), emb.size(), Pooling::Mean, 2)[0] == want_mean);
        CHECK_THROWS_AS(ctx.hidden(emb.size()), std::out_of_range);  // a generation token has no hidden row
        CHECK_THROWS_AS(ctx.logits(0), std::out_of_range);           // an embedding token has no logits
    }
}
