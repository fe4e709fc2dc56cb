// Control vectors in the graph (engine/model/control_vector.h): a zero vector, scale 0 and a layer range
// that excludes every layer are the base model bit for bit; several files act as one file holding their
// scaled sum; a nonzero vector changes every architecture's logits; offloaded layers give the same bits;
// bad files and ranges are refused with the reason.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <functional>

#include "../../control_vector_files.h"
#include "../cuda/sched_test_util.h"
#include "golden_util.h"
#include "synth_models.h"

using namespace engine;

namespace {

const std::string kStories = shared_path("models/stories260K.gguf");
const std::vector<Token> kPrompt = {1, 403, 407, 261, 378, 429, 261, 432, 270, 290, 303};

// Removes the files it was given when the test ends.
struct TempFiles {
    std::vector<std::string> paths;
    std::string add(const std::string& p) { return paths.emplace_back(p); }
    ~TempFiles() {
        for (const auto& p : paths) std::filesystem::remove(p);
    }
};

// Logits of every prompt position.
std::vector<float> prompt_logits(const Model& m, const ControlVector* cvec,
                                 const std::vector<Token>& prompt = kPrompt) {
    ContextParams cp;
    cp.n_ctx = 128;
    cp.n_threads = cp.n_threads_batch = 2;
    cp.n_ubatch = 4;  // several micro-batches
    cp.cvec = cvec;
    Context ctx(m, cp);
    Batch b;
    for (size_t i = 0; i < prompt.size(); ++i) b.add(prompt[i], (Pos)i, {0}, true);
    REQUIRE(ctx.decode(b) == Context::Status::Ok);
    std::vector<float> out;
    for (size_t i = 0; i < prompt.size(); ++i)
        out.insert(out.end(), ctx.logits(i), ctx.logits(i) + ctx.n_vocab());
    return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (double)std::fabs(a[i] - b[i]));
    return d;
}

std::unique_ptr<ControlVector> load(const Model& m, const std::vector<ControlVectorFile>& files,
                                    int start = -1, int end = -1) {
    return ControlVector::create(sum_control_vectors(files), m, start, end);
}

}  // namespace

TEST_CASE("control vectors: zero, scale 0 and an empty layer range are the base model", "[model][cvec]") {
    TempFiles tmp;
    auto m = Model::load(kStories);
    const int L = (int)m->hparams().n_layer;
    const int64_t E = m->hparams().n_embd;
    const auto base = prompt_logits(*m, nullptr);
    const std::string zero = tmp.add(cvec_files::write(cvec_files::zeros(L, E)));
    const std::string rnd = tmp.add(cvec_files::write(cvec_files::random(L, E, 7, 0.5f)));

    auto z = load(*m, {{zero, 1.0f}});
    REQUIRE(z->n_steered() == 0);
    REQUIRE(prompt_logits(*m, z.get()) == base);
    REQUIRE(prompt_logits(*m, load(*m, {{rnd, 0.0f}}).get()) == base);
    // Layers L+1 .. are beyond the model: nothing is steered.
    auto beyond = load(*m, {{rnd, 1.0f}}, L + 1, L + 10);
    REQUIRE(beyond->n_steered() == 0);
    REQUIRE(prompt_logits(*m, beyond.get()) == base);
    // A direction for a layer the model does not have is ignored (llama.cpp does the same).
    const std::string deep = tmp.add(cvec_files::write({{L + 2, std::vector<float>((size_t)E, 1.0f)}}));
    auto d = load(*m, {{deep, 1.0f}});
    REQUIRE(d->n_ignored() == 1);
    REQUIRE(prompt_logits(*m, d.get()) == base);
}

TEST_CASE("control vectors: a nonzero vector changes the logits, the range is inclusive", "[model][cvec]") {
    TempFiles tmp;
    auto m = Model::load(kStories);
    const int L = (int)m->hparams().n_layer;
    const int64_t E = m->hparams().n_embd;
    const auto base = prompt_logits(*m, nullptr);
    const std::string rnd = tmp.add(cvec_files::write(cvec_files::random(L, E, 7, 0.5f)));

    auto all = load(*m, {{rnd, 1.0f}});
    REQUIRE(all->layer_start() == 1);
    REQUIRE(all->layer_end() == L);
    REQUIRE(all->n_steered() == (size_t)(L - 1));  // direction.1 .. direction.L-1
    REQUIRE(max_abs_diff(prompt_logits(*m, all.get()), base) > 0.1);

    // Only layer 2: the same as a file holding only direction.2.
    auto two = load(*m, {{rnd, 1.0f}}, 2, 2);
    REQUIRE(two->n_steered() == 1);
    REQUIRE(two->layer(2) != nullptr);
    REQUIRE(two->layer(1) == nullptr);
    const std::string only2 = tmp.add(cvec_files::write({{2, cvec_files::random(L, E, 7, 0.5f).at(2)}}));
    const auto got2 = prompt_logits(*m, two.get());
    REQUIRE(got2 == prompt_logits(*m, load(*m, {{only2, 1.0f}}).get()));
    REQUIRE(max_abs_diff(got2, base) > 0.01);

    // The greedy continuation changes.
    ContextParams cp;
    cp.n_ctx = 64;
    cp.n_threads = cp.n_threads_batch = 2;
    Context plain(*m, cp);
    const auto want = greedy(plain, kPrompt, 16);
    cp.cvec = all.get();
    Context steered(*m, cp);
    REQUIRE(greedy(steered, kPrompt, 16) != want);
}

TEST_CASE("control vectors: several files are their scaled sum", "[model][cvec]") {
    TempFiles tmp;
    auto m = Model::load(kStories);
    const int L = (int)m->hparams().n_layer;
    const int64_t E = m->hparams().n_embd;
    const auto a = cvec_files::random(L, E, 1, 0.4f);
    auto b = cvec_files::random(L, E, 2, 0.4f);
    b.erase(3);  // files need not cover the same layers
    const std::string fa = tmp.add(cvec_files::write(a));
    const std::string fb = tmp.add(cvec_files::write(b));
    const std::string fsum = tmp.add(cvec_files::write(cvec_files::scaled_sum(a, 0.75f, b, -1.5f)));

    const auto two = prompt_logits(*m, load(*m, {{fa, 0.75f}, {fb, -1.5f}}).get());
    const auto one = prompt_logits(*m, load(*m, {{fsum, 1.0f}}).get());
    REQUIRE(max_abs_diff(two, one) < 1e-4);
    REQUIRE(max_abs_diff(two, prompt_logits(*m, load(*m, {{fa, 0.75f}}).get())) > 0.01);
    // A file given twice counts twice.
    const auto twice = prompt_logits(*m, load(*m, {{fa, 0.5f}, {fa, 0.5f}}).get());
    REQUIRE(max_abs_diff(twice, prompt_logits(*m, load(*m, {{fa, 1.0f}}).get())) < 1e-4);
}

TEST_CASE("control vectors: every decoder architecture is steered, the encoder is refused", "[model][cvec]") {
    TempFiles tmp;
    for (const char* name :
         {"synth-llama-moe-q8_0", "synth-qwen2-q8_0", "synth-qwen3-q4_k", "synth-qwen3moe-q8_0",
          "synth-phi3-q8_0", "synth-gemma2-q8_0", "synth-gemma3-q8_0", "synth-qwen2moe-q8_0", "synth-gemma-q8_0",
          "synth-gpt-oss-mxfp4"}) {
        INFO(name);
        auto m = Model::load(arch_model_path(name));
        const int L = (int)m->hparams().n_layer;
        const int64_t E = m->hparams().n_embd;
        const std::vector<Token> prompt = {1, 20, 30, 40, 50};
        const auto base = prompt_logits(*m, nullptr, prompt);
        const std::string zero = tmp.add(cvec_files::write(cvec_files::zeros(L, E)));
        REQUIRE(prompt_logits(*m, load(*m, {{zero, 1.0f}}).get(), prompt) == base);
        const std::string rnd = tmp.add(cvec_files::write(cvec_files::random(L, E, 3, 2.0f)));
        REQUIRE(max_abs_diff(prompt_logits(*m, load(*m, {{rnd, 1.0f}}).get(), prompt), base) > 1e-3);
    }
    auto bert = Model::load(shared_path("models/synth/synth-bert-f16.gguf"));
    const std::string v = tmp.add(cvec_files::write(cvec_files::zeros(3, bert->hparams().n_embd)));
    REQUIRE_THROWS_WITH(load(*bert, {{v, 1.0f}}), Catch::Contains("encoder"));
}

TEST_CASE("control vectors: bad files and ranges are refused with the reason", "[model][cvec]") {
    TempFiles tmp;
    auto m = Model::load(kStories);
    const int64_t E = m->hparams().n_embd;
    const std::vector<float> d((size_t)E, 0.1f);
    auto expect = [&](const std::string& path, const std::string& why) {
        INFO(why);
        REQUIRE_THROWS_WITH(load(*m, {{path, 1.0f}}), Catch::Contains(why));
    };
    expect(tmp.add(cvec_files::write({{1, std::vector<float>((size_t)E + 1, 0.1f)}})),
           "65 values per layer; the model's n_embd is 64");
    expect(tmp.add(cvec_files::write({})), "no direction tensors");
    expect(tmp.add(cvec_files::write({{0, d}})), "not a direction tensor 'direction.N' with a layer N >= 1");
    expect(tmp.add(cvec_files::write({{1, d}, {2, std::vector<float>(8, 0.0f)}})),
           "the file's other directions");
    expect("/nonexistent/cvec.gguf", "control vector /nonexistent/cvec.gguf");
    auto write_one = [&](const std::string& name, ggml::Type type, int n_dims, const int64_t* ne,
                         size_t bytes) {
        ggml::gguf::Writer w;
        std::vector<uint8_t> z(bytes, 0);
        w.add_tensor(name, type, n_dims, ne, z.data(), z.size());
        const std::string p = cvec_files::temp_path("cvec-bad");
        w.write(p);
        return tmp.add(p);
    };
    const int64_t ne1[1] = {E}, ne2[2] = {E, 2};
    expect(write_one("direction.x", ggml::Type::F32, 1, ne1, (size_t)E * 4),
           "'direction.x' is not a direction");
    expect(write_one("blk.1.attn_q.weight", ggml::Type::F32, 1, ne1, (size_t)E * 4),
           "not a direction tensor");
    expect(write_one("direction.1", ggml::Type::F16, 1, ne1, (size_t)E * 2), "has type f16");
    expect(write_one("direction.1", ggml::Type::F32, 2, ne2, (size_t)E * 8), "not one-dimensional");
    // Files of different widths.
    const std::string narrow = tmp.add(cvec_files::write({{1, std::vector<float>(8, 0.0f)}}));
    const std::string wide = tmp.add(cvec_files::write({{1, d}}));
    REQUIRE_THROWS_WITH(load(*m, {{wide, 1.0f}, {narrow, 1.0f}}),
                        Catch::Contains("do not match the other files' 64"));
    // A start after the end.
    REQUIRE_THROWS_WITH(load(*m, {{wide, 1.0f}}, 4, 2), Catch::Contains("the start is after the end"));
}

TEST_CASE("control vectors: with offloaded layers (stand-ins for a device) the same bits",
          "[model][cvec][offload]") {
    TempFiles tmp;
    auto cpu = Model::load(kStories);
    const int L = (int)cpu->hparams().n_layer;
    const std::string& rnd =
        tmp.add(cvec_files::write(cvec_files::random(L, cpu->hparams().n_embd, 5, 0.5f)));
    const auto want = prompt_logits(*cpu, load(*cpu, {{rnd, 1.0f}}).get());
    using Factory = std::function<std::unique_ptr<ggml::Backend>()>;
    const std::pair<const char*, Factory> devices[] = {
        {"second CPU backend", [] { return std::unique_ptr<ggml::Backend>(ggml::make_cpu_backend(1)); }},
        // Its memory faults when the host touches it: the vectors' twins must be read on the "device".
        {"simulated device",
         [] { return std::unique_ptr<ggml::Backend>(std::make_unique<cuda_test::FakeDevice>()); }}};
    for (const auto& [what, factory] : devices)
        for (int ngl : {2, 99}) {
            INFO(what << ", -ngl " << ngl);
            ModelParams mp;
            mp.n_gpu_layers = ngl;
            mp.offload_backend = factory;
            auto off = Model::load(kStories, mp);
            REQUIRE(prompt_logits(*off, load(*off, {{rnd, 1.0f}}).get()) == want);
        }
}

TEST_CASE("CUDA: control vectors on offloaded layers give the CPU's logits", "[model][cvec][offload][cuda]") {
    cuda_test::require_cuda();
    TempFiles tmp;
    auto cpu = Model::load(kStories);
    const int L = (int)cpu->hparams().n_layer;
    const std::string& rnd =
        tmp.add(cvec_files::write(cvec_files::random(L, cpu->hparams().n_embd, 5, 0.5f)));
    const auto want = prompt_logits(*cpu, load(*cpu, {{rnd, 1.0f}}).get());
    REQUIRE(max_abs_diff(want, prompt_logits(*cpu, nullptr)) > 0.1);
    for (int ngl : {2, 99}) {
        INFO("-ngl " << ngl);
        ModelParams mp;
        mp.n_gpu_layers = ngl;
        auto gpu = Model::load(kStories, mp);
        const double err = max_abs_diff(prompt_logits(*gpu, load(*gpu, {{rnd, 1.0f}}).get()), want);
        INFO("max |GPU - CPU| " << err);
        REQUIRE(err < 1e-3);
        REQUIRE(prompt_logits(*gpu, load(*gpu, {{rnd, 0.0f}}).get()) == prompt_logits(*gpu, nullptr));
    }
}
