// KV cache types (-ctk/-ctv): the cache is written with the type's reference quantizer (set_rows)
// and read by both attention paths; flash attention reads every type, the unfused path every K type
// and the float V types; a quantized V without flash attention is refused.
#include <catch2/catch.hpp>

#include "golden_util.h"

using namespace engine;

namespace {
ggml::Type type_of(const char* name) {
    ggml::Type t;
    REQUIRE(ggml::type_from_name(name, &t));
    return t;
}

// Logits of every position of the first golden case with the given cache types.
std::vector<float> all_logits(const Model& model, const nlohmann::json& golden, bool fa, ggml::Type tk,
                              ggml::Type tv) {
    ContextParams cp;
    cp.n_ctx = 256;
    cp.n_threads = cp.n_threads_batch = 2;
    cp.flash_attn = fa;
    cp.type_k = tk;
    cp.type_v = tv;
    return first_case_logits(model, golden, cp);
}
}  // namespace

TEST_CASE("q8_0 K and V cache with flash attention: synth-tiny-q8_0 logprobs within 0.05",
          "[model][kv][types]") {
    const double worst =
        check_teacher_forced("synth-tiny-q8_0", 0.05, 1e-2, true, 2, ggml::Type::Q8_0, ggml::Type::Q8_0, 0.1);
    REQUIRE(worst > 0);  // the quantized cache is really in use
}

TEST_CASE("f16 cache with flash attention stays within the golden tolerance", "[model][kv][types]") {
    check_teacher_forced("synth-tiny-f16", 0.01, 3e-4, true, 2, ggml::Type::F16, ggml::Type::F16);
    check_teacher_forced("synth-tiny-q8_0", 0.01, 2e-3, true, 2, ggml::Type::F16, ggml::Type::F16);
}

TEST_CASE("every cache type is read by flash attention and the unfused path", "[model][kv][types]") {
    // Bounds on the worst top-5 logprob error against the reference (an f16 cache), about twice what
    // each format gives on random weights; the mean must stay under a third of it.
    const struct {
        const char* name;
        double tol;
    } types[] = {{"f32", 0.002}, {"f16", 0.002}, {"bf16", 0.006}, {"q8_0", 0.015}, {"q5_1", 0.08},
                 {"q5_0", 0.08}, {"q4_1", 0.2},  {"q4_0", 0.2},   {"iq4_nl", 0.2}};
    for (const auto& t : types) {
        const ggml::Type ty = type_of(t.name);
        INFO("cache type " << t.name);
        const double margin = 2 * t.tol;  // greedy picks are checked where the lead exceeds the error
        const double mean = t.tol / 3;
        check_teacher_forced("synth-tiny-f16", t.tol, mean, true, 2, ty, ty, margin);  // FA: K, V
        check_teacher_forced("synth-tiny-f16", t.tol, mean, false, 2, ty, ggml::Type::F16,
                             margin);             // unfused: K
        if (!ggml::type_traits(ty).is_quantized)  // unfused: V
            check_teacher_forced("synth-tiny-f16", t.tol, mean, false, 2, ggml::Type::F16, ty, margin);
    }
}

TEST_CASE("flash attention and the unfused path agree bit for bit on quantized K", "[model][kv][types]") {
    auto model = Model::load(shared_path("models/synth/synth-tiny-f16.gguf"));
    const auto golden = load_golden("synth-tiny-f16.greedy.json");
    for (const char* name : {"q8_0", "q4_0", "bf16"}) {
        INFO("K cache " << name);
        const ggml::Type tk = type_of(name);
        REQUIRE(all_logits(*model, golden, true, tk, ggml::Type::F16) ==
                all_logits(*model, golden, false, tk, ggml::Type::F16));
    }
}

TEST_CASE("a quantized V cache without flash attention is refused with a clear error", "[model][kv][types]") {
    auto model = Model::load(shared_path("models/synth/synth-tiny-f16.gguf"));
    ContextParams cp;
    cp.n_ctx = 64;
    cp.type_v = ggml::Type::Q8_0;
    REQUIRE_THROWS_WITH(Context(*model, cp),
                        Catch::Contains("quantized V cache (q8_0)") && Catch::Contains("flash attention"));
    cp.flash_attn = true;
    REQUIRE_NOTHROW(Context(*model, cp));
}
