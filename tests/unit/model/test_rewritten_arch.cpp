// Features without a golden, on synth models rewritten with them. LongRoPE (phi3): the short factors
// apply while a sequence's share of the context fits the original context, the long ones beyond it;
// factors of 1 leave the rotation (and the logits, bit for bit) unchanged. Mistral's sliding window
// (llama.attention.sliding_window, every layer): positions inside the window keep their logits.
#include <unistd.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "ggml/gguf.h"
#include "golden_util.h"

using namespace engine;

namespace {

// The synth phi3 model with LongRoPE metadata (original context 512) and the given factors.
std::string with_factors(float short_f, float long_f) {
    auto f = ggml::gguf::File::open(shared_path("models/synth/synth-phi3-q8_0.gguf"));
    ggml::gguf::Writer w;
    w.set_alignment(f->alignment());
    for (const auto& [k, v] : f->metadata()) w.set(k, v);
    w.set("phi3.rope.scaling.type", ggml::gguf::Value::string("longrope"));
    w.set("phi3.rope.scaling.original_context_length", ggml::gguf::Value::u32(512));
    for (const auto& t : f->tensors()) w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data, t.size);
    const int64_t n = 16;  // head 32: 16 pairs
    std::vector<float> s(n, short_f), l(n, long_f);
    w.add_tensor("rope_factors_short.weight", ggml::Type::F32, 1, &n, s.data(), s.size() * sizeof(float));
    w.add_tensor("rope_factors_long.weight", ggml::Type::F32, 1, &n, l.data(), l.size() * sizeof(float));
    const std::string path =
        (std::filesystem::temp_directory_path() /
         ("ggserve-longrope-" + std::to_string(getpid()) + "-" + std::to_string(long_f) + ".gguf"))
            .string();
    w.write(path);
    return path;
}

std::vector<float> logits(const std::string& path, uint32_t n_ctx,
                          const std::string& golden = "synth-phi3-q8_0") {
    auto model = Model::load(path);
    ContextParams cp;
    cp.n_ctx = n_ctx;
    cp.n_threads = cp.n_threads_batch = 2;
    return first_case_logits(*model, load_golden(golden + ".greedy.json"), cp);
}

// synth-tiny q8_0 (llama) with a sliding window of `window` positions.
std::string with_window(uint32_t window) {
    auto f = ggml::gguf::File::open(shared_path("models/synth/synth-tiny-q8_0.gguf"));
    ggml::gguf::Writer w;
    w.set_alignment(f->alignment());
    for (const auto& [k, v] : f->metadata()) w.set(k, v);
    w.set("llama.attention.sliding_window", ggml::gguf::Value::u32(window));
    for (const auto& t : f->tensors()) w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data, t.size);
    const std::string path =
        (std::filesystem::temp_directory_path() / ("ggserve-swa-" + std::to_string(getpid()) + ".gguf"))
            .string();
    w.write(path);
    return path;
}

}  // namespace

TEST_CASE("LongRoPE: short factors within the original context, long ones beyond it", "[model][arch][rope]") {
    const std::string plain = shared_path("models/synth/synth-phi3-q8_0.gguf");
    const std::string ones = with_factors(1.0f, 1.0f), long4 = with_factors(1.0f, 4.0f);
    const auto base = logits(plain, 256);
    CHECK(logits(ones, 256) == base);
    CHECK(logits(ones, 1024) == base);
    CHECK(logits(long4, 512) == base);  // 512 does not exceed the original context
    const auto stretched = logits(long4, 1024);
    REQUIRE(stretched.size() == base.size());
    double diff = 0;
    for (size_t i = 0; i < base.size(); ++i) diff = std::max(diff, (double)std::fabs(stretched[i] - base[i]));
    CHECK(diff > 0.1);
    std::filesystem::remove(ones);
    std::filesystem::remove(long4);
}

TEST_CASE("Mistral-style sliding window on every llama layer", "[model][arch][swa]") {
    const uint32_t window = 8;
    const std::string path = with_window(window);
    REQUIRE(Model::load(path)->hparams().n_swa_layers() == 4);
    const auto base = logits(shared_path("models/synth/synth-tiny-q8_0.gguf"), 256, "synth-tiny-q8_0");
    for (bool fa : {false, true}) {
        auto model = Model::load(path);
        ContextParams cp;
        cp.n_ctx = 256;
        cp.n_threads = cp.n_threads_batch = 2;
        cp.flash_attn = fa;
        const auto windowed = first_case_logits(*model, load_golden("synth-tiny-q8_0.greedy.json"), cp);
        REQUIRE(windowed.size() == base.size());
        const size_t n_vocab = model->hparams().n_vocab, n_pos = base.size() / n_vocab;
        REQUIRE(n_pos > window + 4);
        for (size_t p = 0; p < n_pos; ++p) {
            const bool same = std::equal(base.begin() + p * n_vocab, base.begin() + (p + 1) * n_vocab,
                                         windowed.begin() + p * n_vocab);
            INFO("position " << p << " fa " << fa);
            CHECK(same == (p < window));  // position p sees p - window + 1 .. p
        }
    }
    std::filesystem::remove(path);
}
