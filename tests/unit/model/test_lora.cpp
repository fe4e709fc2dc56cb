// LoRA adapters in the graph (engine/model/lora.h): W x + s * alpha / r * B (A x) gives the logits of
// the model with the adapter merged into its weights (to float rounding); scale 0 is the base model bit
// for bit; a sequence's logits depend only on its own scales, whatever else shares the batch; bad
// adapter files are refused with the reason.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <functional>

#include "../../lora_files.h"
#include "../cuda/sched_test_util.h"
#include "golden_util.h"

using namespace engine;

namespace {

const std::string kStories = shared_path("models/stories260K.gguf");
const std::vector<std::string> kTargets = {"blk.0.attn_q.weight", "blk.1.attn_v.weight", "blk.2.ffn_down.weight",
                                           "blk.3.ffn_up.weight", "blk.4.attn_output.weight", "output.weight"};
const std::vector<Token> kPrompt = {1, 403, 407, 261, 378, 429, 261, 432, 270, 290, 303};

// Logits of every prompt position, the prompt in sequence `seq` (alone in the batch unless `other`).
std::vector<float> prompt_logits(const Model& m, const std::vector<const LoraAdapter*>& lora,
                                 const std::vector<float>& scales, bool other_seq = false,
                                 const std::vector<float>& other_scales = {}) {
    ContextParams cp;
    cp.n_ctx = 128;
    cp.n_threads = cp.n_threads_batch = 2;
    cp.n_seq_max = 2;
    cp.n_ubatch = 8;  // several micro-batches
    cp.lora = lora;
    // An F32 cache: with F16 keys, a last-bit difference in K (merged weight vs. separate product) can
    // flip a rounding to f16, 2^-11 of that key, which would hide a small error behind a large one.
    cp.type_k = cp.type_v = ggml::Type::F32;
    Context ctx(m, cp);
    if (!lora.empty()) ctx.set_lora_scales(0, scales);
    if (other_seq && !lora.empty()) ctx.set_lora_scales(1, other_scales);
    Batch b;
    for (size_t i = 0; i < kPrompt.size(); ++i) {
        b.add(kPrompt[i], (Pos)i, {0}, true);
        if (other_seq) b.add(kPrompt[kPrompt.size() - 1 - i], (Pos)i, {1}, true);  // interleaved
    }
    REQUIRE(ctx.decode(b) == Context::Status::Ok);
    std::vector<float> out;
    for (size_t i = 0; i < kPrompt.size(); ++i) {
        const float* l = ctx.logits(other_seq ? 2 * i : i);
        out.insert(out.end(), l, l + ctx.n_vocab());
    }
    return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (double)std::fabs(a[i] - b[i]));
    return d;
}

struct Files {
    std::string a = lora_files::write_adapter(kStories, kTargets, 4, 8.0f, 11);
    std::string b = lora_files::write_adapter(kStories, {"blk.0.ffn_gate.weight", "blk.2.attn_k.weight"}, 2, 0.0f, 12);
    ~Files() {
        std::filesystem::remove(a);
        std::filesystem::remove(b);
    }
};

}  // namespace

TEST_CASE("LoRA: adapters in the graph equal the merged weights, scale 0 is the base model", "[model][lora]") {
    Files files;
    auto base = Model::load(kStories);
    auto la = LoraAdapter::load(files.a, *base);
    auto lb = LoraAdapter::load(files.b, *base);
    REQUIRE(la->n_pairs() == kTargets.size());
    REQUIRE(la->alpha() == 8.0f);
    const std::vector<const LoraAdapter*> both = {la.get(), lb.get()};

    const auto plain = prompt_logits(*base, {}, {});
    REQUIRE(prompt_logits(*base, both, {0.0f, 0.0f}) == plain);  // bit for bit

    for (const std::vector<float>& s : {std::vector<float>{1.0f, 0.0f}, {0.5f, 0.0f}, {0.7f, 1.5f}, {0.0f, -1.0f}}) {
        INFO("scales " << s[0] << ", " << s[1]);
        const std::string merged_path = lora_files::write_merged(kStories, {files.a, files.b}, s);
        auto merged = Model::load(merged_path);
        const auto want = prompt_logits(*merged, {}, {});
        std::filesystem::remove(merged_path);
        const auto got = prompt_logits(*base, both, s);
        // The adapter changes the model, and the graph applies it as the merge does, to float rounding
        // (the merged weights are rounded once).
        const double effect = max_abs_diff(want, plain), err = max_abs_diff(got, want);
        INFO("effect " << effect << ", error " << err);
        REQUIRE(effect > 0.5);
        REQUIRE(err < 1e-4);  // a wrong factor or layout gives errors the size of the effect
    }
}

TEST_CASE("LoRA: a sequence's logits depend only on its own scales", "[model][lora]") {
    Files files;
    auto base = Model::load(kStories);
    auto la = LoraAdapter::load(files.a, *base);
    const std::vector<const LoraAdapter*> one = {la.get()};
    const auto alone = prompt_logits(*base, one, {0.8f});
    // Beside a sequence without the adapter, and beside one with another scale: the same bits.
    REQUIRE(prompt_logits(*base, one, {0.8f}, true, {0.0f}) == alone);
    REQUIRE(prompt_logits(*base, one, {0.8f}, true, {-2.0f}) == alone);
    // And a sequence without the adapter beside one with it is the base model.
    REQUIRE(prompt_logits(*base, one, {0.0f}, true, {0.8f}) == prompt_logits(*base, {}, {}));
}

TEST_CASE("LoRA: bad adapter files are refused with the reason", "[model][lora]") {
    auto base = Model::load(kStories);
    auto expect = [&](const std::string& path, const std::string& why) {
        INFO(path);
        try {
            LoraAdapter::load(path, *base);
            FAIL("loaded");
        } catch (const std::runtime_error& e) {
            INFO(e.what());
            REQUIRE(std::string(e.what()).find(why) != std::string::npos);
        }
        if (path.rfind(std::filesystem::temp_directory_path().string(), 0) == 0) std::filesystem::remove(path);
    };
    auto write = [](const std::function<void(ggml::gguf::Writer&)>& fill) {
        ggml::gguf::Writer w;
        fill(w);
        const std::string p = lora_files::temp_path("bad-lora");
        w.write(p);
        return p;
    };
    auto header = [](ggml::gguf::Writer& w, const char* arch = "llama") {
        w.set("general.architecture", ggml::gguf::Value::string(arch));
        w.set("general.type", ggml::gguf::Value::string("adapter"));
        w.set("adapter.type", ggml::gguf::Value::string("lora"));
    };
    std::vector<float> z(64 * 172, 0.1f);
    const int64_t a_q[2] = {64, 4}, b_q[2] = {4, 64}, b_bad[2] = {4, 63}, a_emb[2] = {64, 4}, b_emb[2] = {4, 512};
    expect(kStories, "not an adapter file");
    expect(write([&](auto& w) {
               header(w, "qwen2");
               w.add_tensor("blk.0.attn_q.weight.lora_a", ggml::Type::F32, 2, a_q, z.data(), 64 * 4 * 4);
               w.add_tensor("blk.0.attn_q.weight.lora_b", ggml::Type::F32, 2, b_q, z.data(), 64 * 4 * 4);
           }),
           "made for architecture \"qwen2\"");
    expect(write([&](auto& w) {
               header(w);
               w.add_tensor("blk.9.attn_q.weight.lora_a", ggml::Type::F32, 2, a_q, z.data(), 64 * 4 * 4);
               w.add_tensor("blk.9.attn_q.weight.lora_b", ggml::Type::F32, 2, b_q, z.data(), 64 * 4 * 4);
           }),
           "is not a tensor of the model");
    expect(write([&](auto& w) {
               header(w);
               w.add_tensor("blk.0.attn_q.weight.lora_a", ggml::Type::F32, 2, a_q, z.data(), 64 * 4 * 4);
               w.add_tensor("blk.0.attn_q.weight.lora_b", ggml::Type::F32, 2, b_bad, z.data(), 63 * 4 * 4);
           }),
           "do not fit the weight");
    expect(write([&](auto& w) {
               header(w);
               w.add_tensor("blk.0.attn_q.weight.lora_a", ggml::Type::F32, 2, a_q, z.data(), 64 * 4 * 4);
           }),
           "has only one of");
    expect(write([&](auto& w) {
               header(w);
               w.add_tensor("token_embd.weight.lora_a", ggml::Type::F32, 2, a_emb, z.data(), 64 * 4 * 4);
               w.add_tensor("token_embd.weight.lora_b", ggml::Type::F32, 2, b_emb, z.data(), 512 * 4 * 4);
           }),
           "token embeddings");
    expect(write([&](auto& w) {
               header(w);
               w.add_tensor("blk.0.attn_q.weight", ggml::Type::F32, 2, a_q, z.data(), 64 * 4 * 4);
           }),
           "neither a .lora_a nor a .lora_b");
    expect(write([&](auto& w) {
               header(w);
               w.set("adapter.alora.invocation_tokens",
                     ggml::gguf::Value::array(ggml::gguf::ValueType::U32,
                                              {ggml::gguf::Value::u32(410), ggml::gguf::Value::u32(317)}));
               w.add_tensor("blk.0.attn_q.weight.lora_a", ggml::Type::F32, 2, a_q, z.data(), 64 * 4 * 4);
               w.add_tensor("blk.0.attn_q.weight.lora_b", ggml::Type::F32, 2, b_q, z.data(), 64 * 4 * 4);
           }),
           "activated LoRA adapters (adapter.alora.invocation_tokens) are not supported");
    expect("/nonexistent/adapter.gguf", "LoRA adapter /nonexistent/adapter.gguf");
}

TEST_CASE("LoRA: the file's task name and prompt prefix are read", "[model][lora]") {
    auto base = Model::load(kStories);
    const std::string plain = lora_files::write_adapter(kStories, {"blk.0.attn_q.weight"}, 2, 4.0f, 5);
    auto a = LoraAdapter::load(plain, *base);
    REQUIRE(a->task_name().empty());
    REQUIRE(a->prompt_prefix().empty());
    std::filesystem::remove(plain);

    ggml::gguf::Writer w;
    w.set("general.architecture", ggml::gguf::Value::string("llama"));
    w.set("general.type", ggml::gguf::Value::string("adapter"));
    w.set("adapter.type", ggml::gguf::Value::string("lora"));
    w.set("adapter.lora.task_name", ggml::gguf::Value::string("summarize"));
    w.set("adapter.lora.prompt_prefix", ggml::gguf::Value::string("Summary: "));
    std::vector<float> z(64 * 4, 0.1f);
    const int64_t ne_a[2] = {64, 4}, ne_b[2] = {4, 64};
    w.add_tensor("blk.0.attn_q.weight.lora_a", ggml::Type::F32, 2, ne_a, z.data(), z.size() * 4);
    w.add_tensor("blk.0.attn_q.weight.lora_b", ggml::Type::F32, 2, ne_b, z.data(), z.size() * 4);
    const std::string named = lora_files::temp_path("named-lora");
    w.write(named);
    auto b = LoraAdapter::load(named, *base);
    REQUIRE(b->task_name() == "summarize");
    REQUIRE(b->prompt_prefix() == "Summary: ");
    std::filesystem::remove(named);
}

TEST_CASE("LoRA: with offloaded layers (stand-ins for a device) the same bits", "[model][lora][offload]") {
    Files files;
    auto cpu = Model::load(kStories);
    auto la_cpu = LoraAdapter::load(files.a, *cpu);
    const auto want = prompt_logits(*cpu, {la_cpu.get()}, {0.6f});
    using Factory = std::function<std::unique_ptr<ggml::Backend>()>;
    const std::pair<const char*, Factory> devices[] = {
        {"second CPU backend", [] { return std::unique_ptr<ggml::Backend>(ggml::make_cpu_backend(1)); }},
        // Its memory faults when the host touches it: the adapter's twins must be read on the "device".
        {"simulated device", [] { return std::unique_ptr<ggml::Backend>(std::make_unique<cuda_test::FakeDevice>()); }}};
    for (const auto& [what, factory] : devices)
        for (int ngl : {2, 99}) {
            INFO(what << ", -ngl " << ngl);
            ModelParams mp;
            mp.n_gpu_layers = ngl;
            mp.offload_backend = factory;
            auto off = Model::load(kStories, mp);
            auto la = LoraAdapter::load(files.a, *off);
            REQUIRE(prompt_logits(*off, {la.get()}, {0.6f}) == want);
        }
}

TEST_CASE("CUDA: LoRA on offloaded layers gives the CPU's logits, scale 0 is the offloaded base model",
          "[model][lora][offload][cuda]") {
    // The GPU's float steps may round differently from the CPU's SIMD ones (docs/cuda.md), so the
    // comparison with the CPU has a tolerance far below the adapter's effect; on the GPU itself, scale 0
    // and a neighbour's scales change nothing, bit for bit.
    cuda_test::require_cuda();
    Files files;
    auto cpu = Model::load(kStories);
    auto la_cpu = LoraAdapter::load(files.a, *cpu);
    const auto want = prompt_logits(*cpu, {la_cpu.get()}, {0.6f});
    REQUIRE(max_abs_diff(want, prompt_logits(*cpu, {}, {})) > 0.5);
    for (int ngl : {2, 99}) {
        INFO("-ngl " << ngl);
        ModelParams mp;
        mp.n_gpu_layers = ngl;  // the default offload backend: CUDA device 0
        auto gpu = Model::load(kStories, mp);
        auto la = LoraAdapter::load(files.a, *gpu);
        const auto got = prompt_logits(*gpu, {la.get()}, {0.6f});
        const double err = max_abs_diff(got, want);
        INFO("max |GPU - CPU| " << err);
        REQUIRE(err < 1e-3);
        REQUIRE(prompt_logits(*gpu, {la.get()}, {0.6f}, true, {0.0f}) == got);
        REQUIRE(prompt_logits(*gpu, {la.get()}, {0.0f}) == prompt_logits(*gpu, {}, {}));
    }
}
