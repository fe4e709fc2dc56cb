// Offload (-ngl) through the engine: weight placement, per-layer KV caches, and decoding through the
// backend scheduler. Without a GPU the offload backend is a stand-in computing with the CPU kernels: a
// second CPU backend, or the scheduler tests' simulated device, whose memory faults when the host
// touches it (so every byte the host reads was copied by the scheduler). Both must give the CPU-only
// logits bit for bit. The tests named "CUDA" do the same placements on a real GPU and check the goldens;
// they skip with exit code 77 where there is no device.
#include <catch2/catch.hpp>
#include <cstring>

#include "../cuda/sched_test_util.h"
#include "engine/model/kv_shift.h"
#include "golden_util.h"

using namespace engine;

namespace {

enum class Offload { SecondCpu, SimulatedDevice, Cuda };

const char* offload_name(Offload k) {
    return k == Offload::SecondCpu         ? "second CPU backend"
           : k == Offload::SimulatedDevice ? "simulated device"
                                           : "CUDA";
}

ModelParams offload_params(int n_gpu_layers, Offload kind) {
    ModelParams mp;
    mp.n_gpu_layers = n_gpu_layers;
    if (kind == Offload::SecondCpu)
        mp.offload_backend = [] { return std::unique_ptr<ggml::Backend>(ggml::make_cpu_backend(1)); };
    else if (kind == Offload::SimulatedDevice)
        mp.offload_backend = [] {
            return std::unique_ptr<ggml::Backend>(std::make_unique<cuda_test::FakeDevice>());
        };
    return mp;  // Cuda: the default backend, device 0
}

std::string model_path(const std::string& name) {
    return name == "stories260K" ? shared_path("models/stories260K.gguf")
                                 : shared_path("models/synth/" + name + ".gguf");
}

// The logits of everything offload could change: a prompt split over micro-batches (every position),
// greedy single-token decodes, a decode after a context shift (the K-shift graph), and a second
// sequence sharing the first one's cells.
std::vector<float> trace(const Model& model, bool flash_attn, uint32_t n_ubatch = 7, bool kv_offload = true) {
    ContextParams cp;
    cp.offload_kqv = kv_offload;
    cp.n_ctx = 96;
    cp.n_threads = cp.n_threads_batch = 2;
    cp.flash_attn = flash_attn;
    cp.n_ubatch = n_ubatch;
    cp.n_seq_max = 2;
    Context ctx(model, cp);
    const int n_vocab = ctx.n_vocab();
    std::vector<float> out;
    auto keep = [&](size_t i) { out.insert(out.end(), ctx.logits(i), ctx.logits(i) + n_vocab); };
    auto decode_one = [&](Token t, Pos pos, SeqId seq) {
        Batch b;
        b.add(t, pos, {seq}, true);
        REQUIRE(ctx.decode(b) == Context::Status::Ok);
        keep(0);
        return argmax(ctx.logits(0), n_vocab);
    };

    std::vector<Token> tokens;
    for (int i = 0; i < 20; ++i) tokens.push_back(1 + (i * 37) % (n_vocab - 1));
    Batch b;
    for (size_t i = 0; i < tokens.size(); ++i) b.add(tokens[i], (Pos)i, {0}, true);
    REQUIRE(ctx.decode(b) == Context::Status::Ok);
    for (size_t i = 0; i < tokens.size(); ++i) keep(i);
    Token t = argmax(ctx.logits(tokens.size() - 1), n_vocab);
    for (int step = 0; step < 6; ++step) {
        tokens.push_back(t);
        t = decode_one(t, (Pos)tokens.size() - 1, 0);
    }
    REQUIRE(shift_context(ctx.kv(), 0, tokens, 4) > 0);
    tokens.push_back(t);
    t = decode_one(t, (Pos)tokens.size() - 1, 0);
    ctx.kv().seq_cp(0, 1, 0, -1);
    decode_one(t, (Pos)tokens.size(), 1);
    return out;
}

// Index of the first logit whose bits differ (-1: identical), so that a failure names one position
// instead of printing every logit.
long first_difference(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return (long)std::min(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return (long)i;
    return -1;
}

// The offload paths of one model against its CPU-only logits, with and without flash attention.
void check_bit_identical(const std::string& name) {
    auto cpu = Model::load(model_path(name));
    const int n_layer = (int)cpu->hparams().n_layer;
    for (bool fa : {false, true}) {
        const auto want = trace(*cpu, fa);
        const std::vector<std::pair<int, Offload>> runs = {
            {2, Offload::SimulatedDevice}, {99, Offload::SimulatedDevice}, {99, Offload::SecondCpu}};
        for (const auto& [ngl, kind] : runs) {
            INFO(name << " -ngl " << ngl << " on the " << offload_name(kind) << ", fa " << fa);
            auto model = Model::load(model_path(name), offload_params(ngl, kind));
            REQUIRE(model->n_offloaded_layers() == (uint32_t)std::min(ngl, n_layer));
            REQUIRE(first_difference(trace(*model, fa), want) == -1);
        }
    }
}

// stories260K's golden greedy completions, token for token, prompts split over micro-batches.
void check_stories_golden(const ModelParams& mp) {
    auto model = Model::load(model_path("stories260K"), mp);
    const auto golden = load_golden("stories260K.greedy.json");
    for (bool fa : {false, true}) {
        ContextParams cp;
        cp.n_ctx = 512;
        cp.n_threads = cp.n_threads_batch = 2;
        cp.flash_attn = fa;
        cp.n_ubatch = 3;
        Context ctx(*model, cp);
        for (const auto& c : golden["cases"]) {
            INFO("prompt '" << c["prompt"].get<std::string>() << "' -ngl " << mp.n_gpu_layers << " fa "
                            << fa);
            const auto prompt = c["prompt_tokens"].get<std::vector<Token>>();
            const auto want = c["completion_tokens"].get<std::vector<Token>>();
            ctx.kv().clear();
            REQUIRE(greedy(ctx, prompt, (int)want.size()) == want);
        }
    }
}

// The synth-tiny goldens (teacher forcing, the tolerances of test_golden.cpp).
void check_synth_goldens(int ngl, Offload kind) {
    const double mean_f16 = 3e-4, mean_q = 2e-3;
    check_teacher_forced("synth-tiny-f16", 0.01, mean_f16, false, 2, ggml::Type::F16, ggml::Type::F16, 0.02,
                         offload_params(ngl, kind));
    check_teacher_forced("synth-tiny-q8_0", 0.01, mean_q, true, 2, ggml::Type::F16, ggml::Type::F16, 0.02,
                         offload_params(ngl, kind));
    check_teacher_forced("synth-tiny-q4_0", 0.02, mean_q, false, 2, ggml::Type::F16, ggml::Type::F16, 0.02,
                         offload_params(ngl, kind));
    check_teacher_forced("synth-tiny-q4_k", 0.02, mean_q, true, 2, ggml::Type::F16, ggml::Type::F16, 0.02,
                         offload_params(ngl, kind));
}

bool on(const ggml::Tensor* w, const ggml::Backend* b) {
    return w->buffer && w->buffer->backend == b;
}

}  // namespace

TEST_CASE("offload places the last N layers (-ngl N), then the output, on the offload backend",
          "[model][offload]") {
    const std::string path = model_path("stories260K");
    auto cpu = Model::load(path);
    const uint32_t n = cpu->hparams().n_layer;
    REQUIRE(n > 2);
    REQUIRE(cpu->offload_backend() == nullptr);
    for (const LayerWeights& l : cpu->layers) REQUIRE(l.wq->buffer == nullptr);  // mmapped, not copied

    auto part = Model::load(path, offload_params(2, Offload::SecondCpu));
    const ggml::Backend* dev = part->offload_backend();
    REQUIRE(dev != nullptr);
    REQUIRE(part->n_offloaded_layers() == 2);
    for (uint32_t il = 0; il < n; ++il) {
        const bool off = il >= n - 2;
        INFO("layer " << il);
        REQUIRE(part->layer_backend(il) == (off ? dev : nullptr));
        const LayerWeights& l = part->layers[il];
        for (const ggml::Tensor* w :
             {l.attn_norm, l.wq, l.wk, l.wv, l.wo, l.ffn_norm, l.w_gate, l.w_up, l.w_down})
            REQUIRE(on(w, dev) == off);
        REQUIRE(std::string(l.wq->name) == cpu->layers[il].wq->name);
    }
    REQUIRE_FALSE(part->output_offloaded());
    REQUIRE(part->output->buffer == nullptr);

    ContextParams cp;
    cp.n_ctx = 64;
    cp.n_threads = 1;
    Context ctx(*part, cp);
    REQUIRE(on(ctx.kv().k((int)n - 1), dev));
    REQUIRE(on(ctx.kv().v((int)n - 1), dev));
    REQUIRE_FALSE(on(ctx.kv().k(0), dev));

    auto layers_only = Model::load(path, offload_params((int)n, Offload::SecondCpu));
    REQUIRE(layers_only->n_offloaded_layers() == n);
    REQUIRE_FALSE(layers_only->output_offloaded());

    auto full = Model::load(path, offload_params(99, Offload::SecondCpu));
    REQUIRE(full->output_offloaded());
    REQUIRE(on(full->output, full->offload_backend()));
    REQUIRE(on(full->output_norm, full->offload_backend()));
    REQUIRE(full->tok_embd->buffer == nullptr);  // embeddings are looked up on the host
    REQUIRE(full->description() == cpu->description());
}

TEST_CASE("offload of stories260K gives the CPU's logits bit for bit", "[model][offload]") {
    check_bit_identical("stories260K");
}
TEST_CASE("offload of synth-tiny f16 gives the CPU's logits bit for bit", "[model][offload]") {
    check_bit_identical("synth-tiny-f16");
}
TEST_CASE("offload of synth-tiny q8_0 gives the CPU's logits bit for bit", "[model][offload]") {
    check_bit_identical("synth-tiny-q8_0");
}
TEST_CASE("offload of synth-tiny q4_0 gives the CPU's logits bit for bit", "[model][offload]") {
    check_bit_identical("synth-tiny-q4_0");
}
TEST_CASE("offload of synth-tiny q4_k gives the CPU's logits bit for bit", "[model][offload]") {
    check_bit_identical("synth-tiny-q4_k");
}

TEST_CASE("goldens pass with 2 and all layers offloaded to a stand-in", "[model][offload][golden]") {
    for (int ngl : {2, 99}) {
        check_stories_golden(offload_params(ngl, Offload::SimulatedDevice));
        check_synth_goldens(ngl, Offload::SimulatedDevice);
    }
}

TEST_CASE("CUDA: stories260K goldens with -ngl 2 and full offload", "[model][offload][golden][cuda]") {
    cuda_test::require_cuda();
    check_stories_golden(offload_params(2, Offload::Cuda));
    check_stories_golden(offload_params(99, Offload::Cuda));
}

TEST_CASE("CUDA: synth-tiny goldens with -ngl 2 and full offload", "[model][offload][golden][cuda]") {
    cuda_test::require_cuda();
    check_synth_goldens(2, Offload::Cuda);
    check_synth_goldens(99, Offload::Cuda);
}

TEST_CASE("CUDA: offloaded logits do not depend on the micro-batch split", "[model][offload][cuda]") {
    // The GPU repeats the CPU's arithmetic, but exp, cos and sin may differ from glibc's in the last ulp
    // (docs/cuda.md), so the comparison with the CPU is the goldens'. Batch invariance holds exactly.
    cuda_test::require_cuda();
    for (const std::string name : {"stories260K", "synth-tiny-q8_0"}) {
        for (int ngl : {2, 99}) {
            INFO(name << " -ngl " << ngl);
            auto model = Model::load(model_path(name), offload_params(ngl, Offload::Cuda));
            for (bool fa : {false, true})
                REQUIRE(first_difference(trace(*model, fa, 1), trace(*model, fa, 7)) == -1);
        }
    }
}

TEST_CASE("no KV offload (-nkvo) keeps the KV cache of offloaded layers on the host, the logits stay the CPU's",
          "[model][offload]") {
    const std::string path = model_path("stories260K");
    auto cpu = Model::load(path);
    for (const Offload kind : {Offload::SimulatedDevice, Offload::SecondCpu}) {
        auto model = Model::load(path, offload_params(99, kind));
        const ggml::Backend* dev = model->offload_backend();
        ContextParams cp;
        cp.n_ctx = 64;
        cp.n_threads = 1;
        cp.offload_kqv = false;
        Context ctx(*model, cp);
        for (int il = 0; il < (int)model->hparams().n_layer; ++il) {
            INFO("layer " << il);
            REQUIRE_FALSE(on(ctx.kv().k(il), dev));
            REQUIRE_FALSE(on(ctx.kv().v(il), dev));
        }
        for (bool fa : {false, true}) {
            INFO(offload_name(kind) << ", fa " << fa);
            REQUIRE(first_difference(trace(*model, fa, 7, false), trace(*cpu, fa)) == -1);
        }
    }
}
