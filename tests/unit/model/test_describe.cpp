// What `ggserve info` and the startup log print about a model (describe_model): the architecture, the
// RoPE type and scaling, frequency factors, sliding windows, soft-caps and experts.
#include <catch2/catch.hpp>

#include "ggml/gguf.h"
#include "golden_util.h"
#include "synth_models.h"

using namespace engine;

namespace {

std::string describe(const std::string& name) {
    auto f = ggml::gguf::File::open(arch_model_path(name));
    std::string all;
    for (const std::string& line : describe_model(HParams::from_gguf(*f), *f)) all += line + "\n";
    return all;
}

}  // namespace

TEST_CASE("model descriptions name the architecture, RoPE, windows and experts", "[model][arch][describe]") {
    CHECK_THAT(describe("synth-qwen2-q8_0"),
               Catch::StartsWith("architecture qwen2: 4 layers, n_embd 128, 4 heads (2 KV) of 32"));
    CHECK_THAT(describe("synth-qwen2-q8_0"),
               Catch::Contains("rope: neox, 32 dims, base 1e+06, scaling none"));
    CHECK_THAT(describe("synth-llama-yarn-q8_0"),
               Catch::Contains(
                   "rope: normal, 32 dims, base 10000, scaling yarn x4 (original context 512, ext_factor 1"));
    CHECK_THAT(describe("synth-llama-rope-freqs-q8_0"),
               Catch::Contains("rope frequency factors: rope_freqs.weight (16)"));
    const std::string g2 = describe("synth-gemma2-q8_0");
    CHECK_THAT(g2, Catch::Contains("sliding window: 16 positions on 13 of 26 layers"));
    CHECK_THAT(g2, Catch::Contains("soft-cap: attention 5, logits 10"));
    const std::string g3 = describe("synth-gemma3-q8_0");
    CHECK_THAT(g3, Catch::Contains("scaling linear x8"));
    CHECK_THAT(g3, Catch::Contains(
                       "sliding window: 16 positions on 4 of 6 layers (rope base 10000, scale 1 there)"));
    CHECK_THAT(describe("synth-qwen3moe-q8_0"),
               Catch::Contains("experts: 8, 2 used per token, FFN 128 each"));
    CHECK_THAT(describe("synth-llama-moe-q8_0"),
               Catch::Contains("experts: 4, 2 used per token, FFN 256 each"));
    CHECK_THAT(describe("synth-qwen2moe-q8_0"),
               Catch::Contains("experts: 8, 2 used per token, FFN 64 each, shared expert FFN 128"));
    CHECK_THAT(describe("synth-gemma-q8_0"),
               Catch::StartsWith("architecture gemma: 3 layers, n_embd 128, 4 heads (1 KV) of 64, FFN 256"));
    CHECK_THAT(describe("synth-gemma-q8_0"), Catch::Contains("rope: neox, 64 dims, base 10000"));
    const std::string oss = describe("synth-gpt-oss-mxfp4");
    CHECK_THAT(oss, Catch::StartsWith("architecture gpt-oss: 4 layers, n_embd 96, 4 heads (2 KV) of 32"));
    CHECK_THAT(oss, Catch::Contains("rope: neox, 32 dims, base 150000, scaling yarn x4 (original context 512"));
    CHECK_THAT(oss, Catch::Contains("sliding window: 16 positions on 2 of 4 layers"));
    CHECK_THAT(oss, Catch::Contains("experts: 4, 2 used per token, FFN 64 each"));
}
