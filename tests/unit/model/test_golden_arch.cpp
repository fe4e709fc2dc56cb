// Every architecture model in ../shared/models/synth (and those the tests write, synth_models.h) against
// its golden from a llama.cpp
// (arch_golden_util.h): at 1 and 2 threads, with and without flash attention, and with -ngl through the
// offload path on the CPU stand-ins (a second CPU backend for the last two layers; the simulated device,
// whose memory faults when the host touches it, for every layer and the output). The results are the
// same on every path (the deltas printed are identical): batch and placement never change the bits. The
// tests named "CUDA: ..." take the same goldens with -ngl 2 and full offload on a GPU (skipped without
// one), where gelu, tanh (soft-caps), norm, top_k, mul_mat_id and rope_ext run on the device.
#include <catch2/catch.hpp>

#include "../cuda/sched_test_util.h"
#include "arch_golden_util.h"

using namespace engine;

namespace {

// Each combination of 1 / 2 threads and flash attention off / on once: two on the CPU alone, two through
// the offload path (the test takes ~4 s per model in Release).
void check_all_paths(const std::string& name) {
    check_arch_golden(name, false, 1);
    check_arch_golden(name, true, 2);
    ModelParams second_cpu;
    second_cpu.n_gpu_layers = 2;
    second_cpu.offload_backend = [] { return std::unique_ptr<ggml::Backend>(ggml::make_cpu_backend(1)); };
    check_arch_golden(name, true, 1, second_cpu);
    ModelParams device;
    device.n_gpu_layers = 99;
    device.offload_backend = [] {
        return std::unique_ptr<ggml::Backend>(std::make_unique<cuda_test::FakeDevice>());
    };
    check_arch_golden(name, false, 2, device);
}

}  // namespace

TEST_CASE("synth-llama-yarn q8_0 matches the reference (YaRN)", "[model][golden][arch]") {
    check_all_paths("synth-llama-yarn-q8_0");
}
TEST_CASE("synth-llama-rope-freqs q8_0 matches the reference (Llama-3.1 frequency factors)",
          "[model][golden][arch]") {
    check_all_paths("synth-llama-rope-freqs-q8_0");
}
TEST_CASE("synth-qwen2 q8_0 matches the reference (QKV biases, NEOX)", "[model][golden][arch]") {
    check_all_paths("synth-qwen2-q8_0");
}
TEST_CASE("synth-qwen3 q4_k matches the reference (q/k head norms)", "[model][golden][arch]") {
    check_all_paths("synth-qwen3-q4_k");
}
TEST_CASE("synth-phi3 q8_0 matches the reference (fused QKV and gate/up)", "[model][golden][arch]") {
    check_all_paths("synth-phi3-q8_0");
}
TEST_CASE("synth-gemma2 q8_0 matches the reference (soft-caps, post-norms, alternating window)",
          "[model][golden][arch]") {
    check_all_paths("synth-gemma2-q8_0");
}
TEST_CASE("synth-gemma3 q8_0 matches the reference (q/k norms, window pattern, local RoPE base)",
          "[model][golden][arch]") {
    check_all_paths("synth-gemma3-q8_0");
}
TEST_CASE("synth-llama-moe q8_0 matches the reference (Mixtral-style experts)", "[model][golden][arch]") {
    check_all_paths("synth-llama-moe-q8_0");
}
TEST_CASE("synth-qwen3moe q8_0 matches the reference (experts, q/k head norms)", "[model][golden][arch]") {
    check_all_paths("synth-qwen3moe-q8_0");
}
TEST_CASE("synth-qwen2moe q8_0 matches the reference (QKV biases, unnormalized experts, gated shared expert)",
          "[model][golden][arch]") {
    check_all_paths("synth-qwen2moe-q8_0");
}
TEST_CASE("synth-gemma q8_0 matches the reference (Gemma 1: embedding scale, GeGLU, one KV head, head 64)",
          "[model][golden][arch]") {
    check_all_paths("synth-gemma-q8_0");
}

TEST_CASE("synth-gpt-oss mxfp4 matches the reference (sinks, biased experts, clamped SwiGLU, YaRN, window)",
          "[model][golden][arch]") {
    check_all_paths("synth-gpt-oss-mxfp4");
}

TEST_CASE("experts stay on the host when the offload device cannot compute mul_mat_id",
          "[model][arch][offload]") {
    for (bool device_has_it : {false, true}) {
        ModelParams mp;
        mp.n_gpu_layers = 99;
        mp.offload_backend = [device_has_it] {
            std::set<ggml::Op> missing;
            if (!device_has_it) missing.insert(ggml::Op::MulMatId);
            return std::unique_ptr<ggml::Backend>(std::make_unique<cuda_test::FakeDevice>(missing));
        };
        auto model = Model::load(shared_path("models/synth/synth-qwen3moe-q8_0.gguf"), mp);
        const ggml::Backend* dev = model->offload_backend();
        for (const LayerWeights& w : model->layers) {
            INFO("device computes mul_mat_id: " << device_has_it);
            REQUIRE((w.wq->buffer && w.wq->buffer->backend == dev));
            REQUIRE((w.router->buffer && w.router->buffer->backend == dev));
            for (const ggml::Tensor* e : {w.w_gate_exps, w.w_up_exps, w.w_down_exps})
                REQUIRE((e->buffer != nullptr) == device_has_it);
        }
        if (!device_has_it) check_arch_golden("synth-qwen3moe-q8_0", true, 2, mp);
    }
}

// On a GPU: every op of these graphs has a CUDA kernel (the soft-caps, GeGLU, rope frequency factors and
// YaRN, the experts' routing and products); rope's cos and sin may differ from glibc's in the last ulp, so
// the comparison is the goldens' tolerances, as on the CPU.
TEST_CASE("CUDA: architecture goldens with -ngl 2 and full offload", "[model][golden][arch][offload][cuda]") {
    cuda_test::require_cuda();
    for (const std::string name :
         {"synth-qwen2-q8_0", "synth-qwen3-q4_k", "synth-phi3-q8_0", "synth-gemma2-q8_0", "synth-gemma3-q8_0",
          "synth-llama-yarn-q8_0", "synth-llama-rope-freqs-q8_0", "synth-llama-moe-q8_0",
          "synth-qwen3moe-q8_0", "synth-qwen2moe-q8_0", "synth-gemma-q8_0", "synth-gpt-oss-mxfp4"}) {
        for (int ngl : {2, 99}) {
            ModelParams mp;
            mp.n_gpu_layers = ngl;  // the default offload backend: CUDA device 0
            check_arch_golden(name, ngl == 99, 2, mp);
        }
    }
}
