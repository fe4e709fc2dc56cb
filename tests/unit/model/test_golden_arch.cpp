// Every architecture model in ../shared/models/synth against its golden from a recent llama.cpp
// (arch_golden_util.h): at 1 and 2 threads, with and without flash attention, and with -ngl through the
// offload path on the CPU stand-ins (a second CPU backend for the last two layers; the simulated device,
// whose memory faults when the host touches it, for every layer and the output). The results are the
// same on every path (the deltas printed are identical): batch and placement never change the bits.
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
    device.offload_backend = [] { return std::unique_ptr<ggml::Backend>(std::make_unique<cuda_test::FakeDevice>()); };
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
