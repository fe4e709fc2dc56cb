// Hostile architecture files: the synth models rewritten with one thing wrong (an unknown architecture,
// a missing or mis-shaped tensor, expert counts that disagree with the tensors or each other, a sliding
// window that is zero or larger than the training context, head counts that do not divide, RoPE
// dimensions larger than the head). Each must fail to load with a message naming the problem, never
// crash or allocate without bound; the edits that give a valid model must load and decode.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <functional>

#include "engine/model/context.h"
#include "engine/model/model.h"
#include "engine/tokenizer/vocab.h"
#include "ggml/gguf.h"
#include "synth_arch.h"

namespace {

using ggml::gguf::Value;

struct Edit {
    std::map<std::string, Value> sets;                     // metadata to set or replace
    std::vector<std::string> erases;                       // metadata keys to leave out
    std::vector<std::string> drops;                        // tensors to leave out
    std::map<std::string, std::vector<int64_t>> reshapes;  // tensors rewritten as f32 of this shape

    Edit& set(const std::string& k, Value v) { return sets.insert_or_assign(k, std::move(v)), *this; }
    Edit& erase(const std::string& k) { return erases.push_back(k), *this; }
    Edit& drop(const std::string& t) { return drops.push_back(t), *this; }
    Edit& reshape(const std::string& t, std::vector<int64_t> ne) {
        return reshapes.insert_or_assign(t, std::move(ne)), *this;
    }
    // The file relabelled as architecture `to`: general.architecture and the "<from>." keys renamed.
    Edit& relabel(const std::string& from, const std::string& to) {
        relabel_from = from, relabel_to = to;
        return set("general.architecture", Value::string(to));
    }
    std::string relabel_from, relabel_to;
    // The tensor rewritten as f32 zeros of its own shape.
    Edit& zero(const std::string& t) { return zeros.push_back(t), *this; }
    std::vector<std::string> zeros;
};

std::string temp_path(const std::string& what) {
    return (std::filesystem::temp_directory_path() /
            ("ggserve-hostile-arch-" + what + "-" + std::to_string(getpid()) + ".gguf"))
        .string();
}

// A synth model: ../shared/models/synth/<name>.gguf, or one the tests write (tests/fixtures/synth_arch.h).
std::string synth(const std::string& name) {
    for (const std::string& n : synth::model_names())
        if (n == name) {
            static std::map<std::string, std::string> written;
            auto it = written.find(name);
            if (it != written.end()) return it->second;
            const std::string path = temp_path(name);
            synth::write_model(name, std::string(GGSERVE_SHARED_DIR) + "/models/vocab", path);
            static struct Cleanup {
                ~Cleanup() {
                    for (const auto& [n, p] : written) std::filesystem::remove(p);
                }
            } cleanup;
            return written[name] = path;
        }
    return std::string(GGSERVE_SHARED_DIR) + "/models/synth/" + name + ".gguf";
}

// Loads the model and decodes one token in a small context ("" when both worked, else the error).
std::string load_and_decode(const std::string& path) {
    try {
        auto m = engine::Model::load(path);
        engine::ContextParams cp;
        cp.n_ctx = 64;
        cp.n_threads = 1;
        engine::Context ctx(*m, cp);
        engine::Batch b;
        b.add(m->vocab().bos() >= 0 ? m->vocab().bos() : 0, 0, {0}, true);
        ctx.decode(b);
        // Finite logits that differ (NaN activations quantize to zeros: every logit 0).
        const float* logits = ctx.logits(0);
        bool varied = false;
        for (uint32_t i = 0; i < m->hparams().n_vocab; ++i) {
            if (!std::isfinite(logits[i])) return "logit " + std::to_string(i) + " is not finite";
            varied = varied || logits[i] != logits[0];
        }
        return varied ? "" : "every logit is " + std::to_string(logits[0]);
    } catch (const std::exception& ex) {
        return ex.what()[0] ? ex.what() : "(empty message)";
    }
}

// The error of loading `name` with `e` applied ("" if it loaded and decoded).
std::string load_edited(const std::string& name, const Edit& e) {
    auto f = ggml::gguf::File::open(synth(name));
    ggml::gguf::Writer w;
    w.set_alignment(f->alignment());
    const auto erased = [&](const std::string& k) {
        return std::find(e.erases.begin(), e.erases.end(), k) != e.erases.end();
    };
    for (const auto& [k, v] : f->metadata()) {
        if (k == "GGUF.alignment" || e.sets.count(k) || erased(k)) continue;
        const std::string from = e.relabel_from + ".";
        w.set(!e.relabel_from.empty() && k.rfind(from, 0) == 0 ? e.relabel_to + "." + k.substr(from.size()) : k, v);
    }
    for (const auto& [k, v] : e.sets) w.set(k, v);
    std::vector<float> zeros;
    for (const auto& t : f->tensors()) {
        if (std::find(e.drops.begin(), e.drops.end(), t.name) != e.drops.end()) continue;
        if (auto it = e.reshapes.find(t.name); it != e.reshapes.end()) {
            int64_t ne[4] = {1, 1, 1, 1}, n = 1;
            for (size_t i = 0; i < it->second.size(); ++i) n *= ne[i] = it->second[i];
            zeros.assign((size_t)n, 0.01f);
            w.add_tensor(t.name, ggml::Type::F32, (int)it->second.size(), ne, zeros.data(), zeros.size() * 4);
            continue;
        }
        if (std::find(e.zeros.begin(), e.zeros.end(), t.name) != e.zeros.end()) {
            zeros.assign((size_t)t.nelements(), 0.0f);
            w.add_tensor(t.name, ggml::Type::F32, t.n_dims, t.ne, zeros.data(), zeros.size() * 4);
            continue;
        }
        w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data, t.size);
    }
    const std::string path = temp_path("edited");
    w.write(path);
    const std::string err = load_and_decode(path);
    std::filesystem::remove(path);
    return err;
}

struct Case {
    const char* what;
    const char* model;
    Edit edit;
    std::vector<std::string> expect;  // substrings of the error; none: the file must load and decode
};

void check(const std::vector<Case>& cases) {
    for (const Case& c : cases) {
        INFO(c.what << " (" << c.model << ")");
        const std::string err = load_edited(c.model, c.edit);
        INFO("error: " << err);
        if (c.expect.empty()) CHECK(err == "");
        for (const std::string& s : c.expect) CHECK_THAT(err, Catch::Contains(s));
    }
}

Value u32(uint32_t v) {
    return Value::u32(v);
}
Value i32(int32_t v) {
    return Value::i32(v);
}

}  // namespace

TEST_CASE("the unmodified synth architecture files load and decode", "[hostile][arch]") {
    for (const char* name :
         {"synth-qwen2-q8_0", "synth-qwen3-q4_k", "synth-phi3-q8_0", "synth-gemma2-q8_0", "synth-gemma3-q8_0",
          "synth-llama-moe-q8_0", "synth-qwen3moe-q8_0", "synth-qwen2moe-q8_0", "synth-gemma-q8_0",
          "synth-gpt-oss-mxfp4"}) {
        INFO(name);
        REQUIRE(load_edited(name, {}) == "");
    }
}

TEST_CASE("an unknown architecture is named, with the supported ones", "[hostile][arch]") {
    check({{"unknown",
            "synth-qwen2-q8_0",
            Edit().set("general.architecture", Value::string("mamba9")),
            {"unsupported model architecture 'mamba9'", "qwen3moe"}},
           {"missing", "synth-qwen2-q8_0", Edit().erase("general.architecture"), {"general.architecture"}}});
}

TEST_CASE("a missing tensor is named", "[hostile][arch]") {
    check({
        {"q/k norm",
         "synth-qwen3-q4_k",
         Edit().drop("blk.1.attn_k_norm.weight"),
         {"missing tensor 'blk.1.attn_k_norm.weight'"}},
        {"post-norm",
         "synth-gemma2-q8_0",
         Edit().drop("blk.3.post_ffw_norm.weight"),
         {"missing tensor 'blk.3.post_ffw_norm.weight'"}},
        {"gemma3 q norm",
         "synth-gemma3-q8_0",
         Edit().drop("blk.0.attn_q_norm.weight"),
         {"missing tensor 'blk.0.attn_q_norm.weight'"}},
        {"qwen2 bias",
         "synth-qwen2-q8_0",
         Edit().drop("blk.0.attn_v.bias"),
         {"missing tensor 'blk.0.attn_v.bias'"}},
        {"experts",
         "synth-qwen3moe-q8_0",
         Edit().drop("blk.0.ffn_down_exps.weight"),
         {"missing tensor 'blk.0.ffn_down_exps.weight'"}},
        {"router",
         "synth-llama-moe-q8_0",
         Edit().drop("blk.1.ffn_gate_inp.weight"),
         {"missing tensor 'blk.1.ffn_gate_inp.weight'"}},
        {"shared-expert gate",
         "synth-qwen2moe-q8_0",
         Edit().drop("blk.0.ffn_gate_inp_shexp.weight"),
         {"missing tensor 'blk.0.ffn_gate_inp_shexp.weight'"}},
        {"shared expert",
         "synth-qwen2moe-q8_0",
         Edit().drop("blk.2.ffn_down_shexp.weight"),
         {"missing tensor 'blk.2.ffn_down_shexp.weight'"}},
        {"embeddings",
         "synth-qwen3moe-q8_0",
         Edit().drop("token_embd.weight"),
         {"missing tensor 'token_embd.weight'"}},
        {"output norm",
         "synth-gemma3-q8_0",
         Edit().drop("output_norm.weight"),
         {"missing tensor 'output_norm.weight'"}},
        {"attention sinks",
         "synth-gpt-oss-mxfp4",
         Edit().drop("blk.2.attn_sinks.weight"),
         {"missing tensor 'blk.2.attn_sinks.weight'"}},
        {"expert bias",
         "synth-gpt-oss-mxfp4",
         Edit().drop("blk.1.ffn_down_exps.bias"),
         {"missing tensor 'blk.1.ffn_down_exps.bias'"}},
        {"router bias",
         "synth-gpt-oss-mxfp4",
         Edit().drop("blk.0.ffn_gate_inp.bias"),
         {"missing tensor 'blk.0.ffn_gate_inp.bias'"}},
    });
}

TEST_CASE("a mis-shaped tensor is named with both shapes", "[hostile][arch]") {
    check({
        {"sinks per head",
         "synth-gpt-oss-mxfp4",
         Edit().reshape("blk.1.attn_sinks.weight", {2}),
         {"tensor 'blk.1.attn_sinks.weight' has shape [2]", "needs [4]"}},
        {"expert bias rows",
         "synth-gpt-oss-mxfp4",
         Edit().reshape("blk.3.ffn_gate_exps.bias", {64, 3}),
         {"tensor 'blk.3.ffn_gate_exps.bias' has shape [64, 3]", "needs [64, 4]"}},
        {"bias",
         "synth-qwen2-q8_0",
         Edit().reshape("blk.2.attn_q.bias", {120}),
         {"tensor 'blk.2.attn_q.bias' has shape [120]", "needs [128]"}},
        {"expert rows",
         "synth-qwen3moe-q8_0",
         Edit().reshape("blk.1.ffn_down_exps.weight", {96, 128, 8}),
         {"tensor 'blk.1.ffn_down_exps.weight' has shape [96, 128, 8]", "needs [128, 128, 8]"}},
        {"expert tensor of 2 dims",
         "synth-qwen3moe-q8_0",
         Edit().reshape("blk.0.ffn_gate_exps.weight", {128, 128}),
         {"tensor 'blk.0.ffn_gate_exps.weight' has shape [128, 128]", "needs [128, 128, 8]"}},
        {"router rows",
         "synth-qwen3moe-q8_0",
         Edit().reshape("blk.0.ffn_gate_inp.weight", {96, 8}),
         {"tensor 'blk.0.ffn_gate_inp.weight' has shape [96, 8]", "needs [128, 8]"}},
        {"router of 1 dim",
         "synth-llama-moe-q8_0",
         Edit().reshape("blk.0.ffn_gate_inp.weight", {128}),
         {"tensor 'blk.0.ffn_gate_inp.weight' has shape [128]", "needs [128, 4]"}},
        {"router of 3 dims",
         "synth-llama-moe-q8_0",
         Edit().reshape("blk.0.ffn_gate_inp.weight", {128, 4, 2}),
         {"tensor 'blk.0.ffn_gate_inp.weight' has shape [128, 4, 2]", "needs [128, 4]"}},
        {"shared-expert gate",
         "synth-qwen2moe-q8_0",
         Edit().reshape("blk.1.ffn_gate_inp_shexp.weight", {128, 2}),
         {"tensor 'blk.1.ffn_gate_inp_shexp.weight' has shape [128, 2]", "needs [128]"}},
        {"shared expert",
         "synth-qwen2moe-q8_0",
         Edit().reshape("blk.0.ffn_up_shexp.weight", {128, 64}),
         {"tensor 'blk.0.ffn_up_shexp.weight' has shape [128, 64]", "needs [128, 128]"}},
        {"rope factors",
         "synth-llama-rope-freqs-q8_0",
         Edit().reshape("rope_freqs.weight", {8}),
         {"tensor 'rope_freqs.weight' has shape [8]", "needs [16]"}},
    });
}

TEST_CASE("expert tensors whose expert count disagrees with expert_count name both numbers",
          "[hostile][arch]") {
    check({
        {"metadata",
         "synth-llama-moe-q8_0",
         Edit().set("llama.expert_count", u32(8)),
         {"'blk.0.ffn_gate_inp.weight' holds 4 experts but the model metadata says expert_count 8"}},
        {"one tensor",
         "synth-llama-moe-q8_0",
         Edit().reshape("blk.1.ffn_up_exps.weight", {128, 256, 3}),
         {"'blk.1.ffn_up_exps.weight' holds 3 experts but the model metadata says expert_count 4"}},
        {"router",
         "synth-qwen3moe-q8_0",
         Edit().reshape("blk.2.ffn_gate_inp.weight", {128, 7}),
         {"'blk.2.ffn_gate_inp.weight' holds 7 experts but the model metadata says expert_count 8"}},
        {"qwen2moe",
         "synth-qwen2moe-q8_0",
         Edit().set("qwen2moe.expert_count", u32(6)),
         {"holds 8 experts but the model metadata says expert_count 6"}},
        {"expert rows",
         "synth-qwen2moe-q8_0",
         Edit().set("qwen2moe.expert_feed_forward_length", u32(32)),
         {"tensor 'blk.0.ffn_gate_exps.weight' has shape [128, 64, 8]", "needs [128, 32, 8]"}},
    });
}

TEST_CASE("expert_count and expert_used_count that do not fit each other are refused", "[hostile][arch]") {
    check({
        {"used > count",
         "synth-qwen3moe-q8_0",
         Edit().set("qwen3moe.expert_used_count", u32(9)),
         {"expert_used_count 9 exceeds expert_count 8"}},
        {"used 0",
         "synth-qwen3moe-q8_0",
         Edit().set("qwen3moe.expert_used_count", u32(0)),
         {"expert_used_count must be positive"}},
        {"used missing",
         "synth-llama-moe-q8_0",
         Edit().erase("llama.expert_used_count"),
         {"expert_used_count must be positive"}},
        {"used absurd",
         "synth-llama-moe-q8_0",
         Edit().set("llama.expert_used_count", u32(1u << 31)),
         {"expert_used_count 2147483648 exceeds expert_count 4"}},
        {"count absurd",
         "synth-qwen3moe-q8_0",
         Edit().set("qwen3moe.expert_count", u32(1u << 31)).set("qwen3moe.expert_used_count", u32(1u << 30)),
         {"expert_count 2147483648 is implausible"}},
        {"count max",
         "synth-qwen3moe-q8_0",
         Edit().set("qwen3moe.expert_count", u32(UINT32_MAX)),
         {"expert_count 4294967295 is implausible"}},
        {"count negative",
         "synth-llama-moe-q8_0",
         Edit().set("llama.expert_count", i32(-4)),
         {"'llama.expert_count' is -4"}},
        {"count not an integer",
         "synth-llama-moe-q8_0",
         Edit().set("llama.expert_count", Value::string("4")),
         {"llama.expert_count"}},
        {"qwen3moe count 0",
         "synth-qwen3moe-q8_0",
         Edit().set("qwen3moe.expert_count", u32(0)).set("qwen3moe.expert_used_count", u32(0)),
         {"qwen3moe needs 'qwen3moe.expert_count'"}},
        {"qwen2moe count missing",
         "synth-qwen2moe-q8_0",
         Edit().erase("qwen2moe.expert_count").erase("qwen2moe.expert_used_count"),
         {"qwen2moe needs 'qwen2moe.expert_count'"}},
        {"qwen3moe expert length missing",
         "synth-qwen3moe-q8_0",
         Edit().erase("qwen3moe.expert_feed_forward_length"),
         {"qwen3moe needs 'qwen3moe.expert_feed_forward_length'"}},
        {"gpt-oss expert length missing",
         "synth-gpt-oss-mxfp4",
         Edit().erase("gpt-oss.expert_feed_forward_length"),
         {"gpt-oss needs 'gpt-oss.expert_feed_forward_length'"}},
        // count 0 (or no key) in a file with expert tensors: the experts are named, not a dense tensor
        {"llama count 0 with experts",
         "synth-llama-moe-q8_0",
         Edit().set("llama.expert_count", u32(0)).set("llama.expert_used_count", u32(0)),
         {"'blk.0.ffn_gate_inp.weight'", "expert", "llama.expert_count is 0"}},
        {"llama count missing with experts",
         "synth-llama-moe-q8_0",
         Edit().erase("llama.expert_count").erase("llama.expert_used_count"),
         {"'blk.0.ffn_gate_inp.weight'", "llama.expert_count is 0"}},
        // experts in the metadata of a dense file: the dense layer is named
        {"dense llama with expert_count",
         "synth-tiny-q8_0",
         Edit().set("llama.expert_count", u32(4)).set("llama.expert_used_count", u32(2)),
         {"expert_count 4", "no expert router 'blk.0.ffn_gate_inp.weight'", "'blk.0.ffn_gate.weight'"}},
        // expert tensors in an architecture without experts
        {"qwen3moe labelled qwen3",
         "synth-qwen3moe-q8_0",
         Edit().relabel("qwen3moe", "qwen3"),
         {"tensor 'blk.0.ffn_gate_inp.weight' belongs to a mixture of experts, but architecture qwen3 has no experts"}},
        // an architecture without experts ignores the keys, as llama.cpp does
        {"qwen2 with expert_count",
         "synth-qwen2-q8_0",
         Edit().set("qwen2.expert_count", u32(4)).set("qwen2.expert_used_count", u32(2)),
         {}},
    });
}

TEST_CASE("sliding windows that are zero, negative or larger than the training context are refused",
          "[hostile][arch]") {
    check({
        {"gemma2 too large",
         "synth-gemma2-q8_0",
         Edit().set("gemma2.attention.sliding_window", u32(100000)),
         {"attention.sliding_window 100000 exceeds the training context 2048"}},
        {"mistral-style too large",
         "synth-llama-moe-q8_0",
         Edit().set("llama.attention.sliding_window", u32(4096)),
         {"attention.sliding_window 4096 exceeds the training context 2048"}},
        {"absurd",
         "synth-gemma3-q8_0",
         Edit().set("gemma3.attention.sliding_window", u32(UINT32_MAX)),
         {"attention.sliding_window 4294967295 exceeds the training context"}},
        {"gemma3 zero",
         "synth-gemma3-q8_0",
         Edit().set("gemma3.attention.sliding_window", u32(0)),
         {"gemma3.attention.sliding_window must be positive"}},
        {"gemma2 zero",
         "synth-gemma2-q8_0",
         Edit().set("gemma2.attention.sliding_window", u32(0)),
         {"gemma2.attention.sliding_window must be positive"}},
        {"gpt-oss missing",
         "synth-gpt-oss-mxfp4",
         Edit().erase("gpt-oss.attention.sliding_window"),
         {"gpt-oss.attention.sliding_window must be positive"}},
        {"negative",
         "synth-gemma2-q8_0",
         Edit().set("gemma2.attention.sliding_window", i32(-16)),
         {"'gemma2.attention.sliding_window' is -16"}},
        {"pattern length",
         "synth-gemma3-q8_0",
         Edit().set("gemma3.attention.sliding_window_pattern",
                    Value::array(ggml::gguf::ValueType::Bool, {Value::boolean(true), Value::boolean(false)})),
         {"'gemma3.attention.sliding_window_pattern' has 2 entries for 6 layers"}},
        // a window as long as the training context, or longer than the context asked for (64), is fine
        {"window = training context",
         "synth-gemma2-q8_0",
         Edit().set("gemma2.attention.sliding_window", u32(2048)),
         {}},
        {"mistral-style window",
         "synth-llama-moe-q8_0",
         Edit().set("llama.attention.sliding_window", u32(1)),
         {}},
    });
}

TEST_CASE("head counts that do not divide and RoPE dimensions larger than the head are refused",
          "[hostile][arch]") {
    check({
        {"kv heads",
         "synth-qwen2-q8_0",
         Edit().set("qwen2.attention.head_count_kv", u32(3)),
         {"attention.head_count 4 is not a multiple of attention.head_count_kv 3"}},
        {"more kv heads than heads",
         "synth-qwen3moe-q8_0",
         Edit().set("qwen3moe.attention.head_count_kv", u32(8)),
         {"attention.head_count 4 is not a multiple of attention.head_count_kv 8"}},
        {"embedding / heads",
         "synth-llama-moe-q8_0",
         Edit().set("llama.attention.head_count", u32(3)).set("llama.attention.head_count_kv", u32(1)),
         {"embedding_length 128 is not a multiple of attention.head_count 3"}},
        {"zero heads",
         "synth-gemma3-q8_0",
         Edit().set("gemma3.attention.head_count", u32(0)),
         {"head_count"}},
        {"absurd heads",
         "synth-qwen2moe-q8_0",
         Edit()
             .set("qwen2moe.attention.head_count", u32(1u << 31))
             .set("qwen2moe.attention.head_count_kv", u32(1)),
         {"attention.head_count 2147483648 is implausible"}},
        {"per-layer heads",
         "synth-qwen2-q8_0",
         Edit().set("qwen2.attention.head_count",
                    Value::array(ggml::gguf::ValueType::U32, {u32(4), u32(4), u32(4), u32(4)})),
         {"qwen2.attention.head_count"}},
        {"rope larger than the head",
         "synth-qwen2-q8_0",
         Edit().set("qwen2.rope.dimension_count", u32(64)),
         {"rope.dimension_count 64 exceeds the head size 32"}},
        {"rope larger than gemma's head",
         "synth-gemma-q8_0",
         Edit().set("gemma.rope.dimension_count", u32(128)),
         {"rope.dimension_count 128 exceeds the head size 64"}},
        {"odd rope",
         "synth-qwen3moe-q8_0",
         Edit().set("qwen3moe.rope.dimension_count", u32(31)),
         {"rope.dimension_count 31 is odd"}},
        {"zero rope",
         "synth-gemma2-q8_0",
         Edit().set("gemma2.rope.dimension_count", u32(0)),
         {"rope.dimension_count must be positive"}},
        {"partial rope", "synth-qwen2-q8_0", Edit().set("qwen2.rope.dimension_count", u32(16)), {}},
    });
}

TEST_CASE("weights of zeros where the graph divides or normalizes give finite, varied logits", "[hostile][arch]") {
    check({
        {"shared-expert gate of zeros", "synth-qwen2moe-q8_0", Edit().zero("blk.1.ffn_gate_inp_shexp.weight"), {}},
        {"router of zeros", "synth-qwen3moe-q8_0", Edit().zero("blk.0.ffn_gate_inp.weight"), {}},
        {"router of zeros", "synth-llama-moe-q8_0", Edit().zero("blk.2.ffn_gate_inp.weight"), {}},
        {"norm of zeros", "synth-gemma3-q8_0", Edit().zero("blk.0.attn_k_norm.weight"), {}},
    });
}

TEST_CASE("an absurd training context is refused before the KV cache is sized from it", "[hostile][arch]") {
    check({
        {"zero",
         "synth-qwen2-q8_0",
         Edit().set("qwen2.context_length", u32(0)),
         {"context_length must be positive"}},
        {"2^31",
         "synth-qwen3moe-q8_0",
         Edit().set("qwen3moe.context_length", u32(1u << 31)),
         {"context_length 2147483648 is implausible"}},
    });
}
