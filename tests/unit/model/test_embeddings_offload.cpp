// Encoders (bert, nomic-bert with RoPE, jina-bert-v2 with ALiBi) with their layers offloaded (-ngl): on the
// CPU stand-ins (a second CPU backend for the last two layers, the simulated device for everything) the
// pooled vectors and hidden states are the CPU's bit for bit; on a GPU ("CUDA: ..." tests, skipped without
// one) they match the llama.cpp goldens within the golden README's tolerance (cosine >= 0.999) and the
// CPU's far more closely.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../cuda/sched_test_util.h"
#include "encoder_fixture.h"
#include "engine/model/embeddings.h"
#include "golden_util.h"

using namespace engine;

namespace {

// An encoder model file and its golden: bert from ../shared, the others the test fixtures (written once).
struct Encoder {
    std::string path;
    nlohmann::json golden;
    explicit Encoder(const std::string& name) {
        if (name == "synth-bert-f16") {
            path = shared_path("models/synth/synth-bert-f16.gguf");
            golden = load_golden("synth-bert-f16.embeddings.json");
        } else {
            const auto& fx = encoder_test::encoder_fixture(name);
            path = fx.path;
            golden = fx.golden;
        }
    }
};

const std::vector<std::string> kEncoders = {"synth-bert-f16", "synth-nomic-bert-q8_0",
                                            "synth-jina-bert-v2-q8_0"};

// Every golden case's mean and cls vectors and per-token hidden states, in one list.
std::vector<std::vector<float>> all_vectors(const Model& model, const nlohmann::json& golden, bool flash) {
    ContextParams cp;
    cp.n_ctx = 2048;
    cp.n_batch = cp.n_ubatch = 512;
    cp.n_seq_max = 4;
    cp.n_threads = cp.n_threads_batch = 2;
    cp.flash_attn = flash;
    Context ctx(model, cp);
    std::vector<std::vector<float>> out;
    for (const auto& c : golden["cases"]) {
        const auto tokens = c["tokens"].get<std::vector<Token>>();
        for (Pooling p : {Pooling::Mean, Pooling::Cls}) out.push_back(embed(ctx, {tokens}, {p, 2, {}})[0][0]);
        auto rows = embed(ctx, {tokens}, {Pooling::None, 2, {}});
        for (auto& row : rows[0]) out.push_back(std::move(row));
    }
    return out;
}

// The golden's vectors in all_vectors' order.
std::vector<std::vector<float>> golden_vectors(const nlohmann::json& golden) {
    std::vector<std::vector<float>> out;
    for (const auto& c : golden["cases"]) {
        out.push_back(c["mean"].get<std::vector<float>>());
        out.push_back(c["cls"].get<std::vector<float>>());
        for (const auto& h : c["hidden"]) out.push_back(h.get<std::vector<float>>());
    }
    return out;
}

double min_cosine(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 1;
    for (size_t i = 0; i < a.size(); ++i) worst = std::min(worst, encoder_test::cosine(a[i], b[i]));
    return worst;
}

}  // namespace

TEST_CASE("encoders with offloaded layers give the CPU's embeddings bit for bit (stand-in devices)",
          "[model][embeddings][offload]") {
    for (const std::string& name : kEncoders) {
        const Encoder enc(name);
        auto cpu = Model::load(enc.path);
        for (bool flash : {false, true}) {
            const auto want = all_vectors(*cpu, enc.golden, flash);
            REQUIRE(min_cosine(want, golden_vectors(enc.golden)) >= 0.999);
            ModelParams second_cpu;
            second_cpu.n_gpu_layers = 2;
            second_cpu.offload_backend = [] {
                return std::unique_ptr<ggml::Backend>(ggml::make_cpu_backend(2));
            };
            ModelParams device;
            device.n_gpu_layers = 99;
            device.offload_backend = [] {
                return std::unique_ptr<ggml::Backend>(std::make_unique<cuda_test::FakeDevice>());
            };
            for (const ModelParams& mp : {second_cpu, device}) {
                INFO(name << ", -ngl " << mp.n_gpu_layers << ", flash " << flash);
                auto off = Model::load(enc.path, mp);
                REQUIRE(off->offload_backend() != nullptr);
                REQUIRE(all_vectors(*off, enc.golden, flash) == want);
            }
        }
    }
}

// On a GPU the f16 products and rope's cos/sin may round differently from the CPU's (docs/cuda.md), so
// the comparison is the golden's tolerance and a much tighter one against the CPU.
TEST_CASE("CUDA: encoders with -ngl 2 and full offload match the embeddings goldens",
          "[model][embeddings][offload][cuda]") {
    cuda_test::require_cuda();
    for (const std::string& name : kEncoders) {
        const Encoder enc(name);
        auto cpu = Model::load(enc.path);
        const auto golden = golden_vectors(enc.golden);
        for (bool flash : {false, true}) {
            const auto want = all_vectors(*cpu, enc.golden, flash);
            for (int ngl : {2, 99}) {
                ModelParams mp;
                mp.n_gpu_layers = ngl;  // the default offload backend: CUDA device 0
                auto gpu = Model::load(enc.path, mp);
                const auto got = all_vectors(*gpu, enc.golden, flash);
                const double vs_golden = min_cosine(got, golden), vs_cpu = min_cosine(got, want);
                INFO(name << ", -ngl " << ngl << ", flash " << flash << ": min cosine against the golden "
                          << vs_golden << ", against the CPU " << vs_cpu);
                CHECK(vs_golden >= 0.999);
                CHECK(vs_cpu >= 0.99999);
                WARN(name << ", -ngl " << ngl << ", flash " << flash << ": min cosine against the golden "
                          << vs_golden << ", against the CPU " << vs_cpu);
            }
        }
    }
}
