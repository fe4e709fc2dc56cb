// Hostile architecture files: the synth models rewritten with one thing wrong (an unknown architecture,
// a missing or mis-shaped tensor, expert counts that disagree with the tensors, a sliding window larger
// than the context). Each must fail to load with a message naming the problem, never crash.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>

#include "engine/model/model.h"
#include "ggml/gguf.h"

namespace {

using ggml::gguf::Value;

struct Edit {
    std::map<std::string, Value> set;  // metadata to set or replace
    std::string drop;                  // a tensor to leave out
    std::string reshape;               // a tensor whose first dimension loses its last `shrink` elements
    int64_t shrink = 0;
};

std::string synth(const std::string& name) {
    return std::string(GGSERVE_SHARED_DIR) + "/models/synth/" + name + ".gguf";
}

// The error of loading `name` with `e` applied ("" if it loaded).
std::string load_edited(const std::string& name, const Edit& e) {
    auto f = ggml::gguf::File::open(synth(name));
    ggml::gguf::Writer w;
    w.set_alignment(f->alignment());
    for (const auto& [k, v] : f->metadata())
        if (k != "GGUF.alignment" && !e.set.count(k)) w.set(k, v);
    for (const auto& [k, v] : e.set) w.set(k, v);
    for (const auto& t : f->tensors()) {
        if (t.name == e.drop) continue;
        int64_t ne[4] = {t.ne[0], t.ne[1], t.ne[2], t.ne[3]};
        size_t size = t.size;
        if (t.name == e.reshape) {
            REQUIRE(t.type == ggml::Type::F32);
            ne[0] -= e.shrink;
            size = (size_t)(ne[0] * ne[1] * ne[2] * ne[3]) * sizeof(float);
        }
        w.add_tensor(t.name, t.type, t.n_dims, ne, t.data, size);
    }
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("ggserve-hostile-arch-" + std::to_string(getpid()) + ".gguf"))
                                 .string();
    w.write(path);
    std::string err;
    try {
        engine::Model::load(path);
    } catch (const std::exception& ex) {
        err = ex.what();
    }
    std::filesystem::remove(path);
    return err;
}

}  // namespace

TEST_CASE("the unmodified synth architecture files load", "[hostile][arch]") {
    for (const char* name : {"synth-qwen2-q8_0", "synth-qwen3-q4_k", "synth-phi3-q8_0", "synth-gemma2-q8_0",
                             "synth-gemma3-q8_0", "synth-llama-moe-q8_0", "synth-qwen3moe-q8_0"}) {
        INFO(name);
        REQUIRE(load_edited(name, {}) == "");
    }
}

TEST_CASE("an unknown architecture is named, with the supported ones", "[hostile][arch]") {
    Edit e;
    e.set["general.architecture"] = Value::string("mamba9");
    const std::string err = load_edited("synth-qwen2-q8_0", e);
    REQUIRE_THAT(err, Catch::Contains("unsupported model architecture 'mamba9'"));
    REQUIRE_THAT(err, Catch::Contains("qwen3moe"));
}

TEST_CASE("a missing tensor is named", "[hostile][arch]") {
    Edit e;
    e.drop = "blk.1.attn_k_norm.weight";
    REQUIRE_THAT(load_edited("synth-qwen3-q4_k", e),
                 Catch::Contains("missing tensor 'blk.1.attn_k_norm.weight'"));
    e.drop = "blk.3.post_ffw_norm.weight";
    REQUIRE_THAT(load_edited("synth-gemma2-q8_0", e),
                 Catch::Contains("missing tensor 'blk.3.post_ffw_norm.weight'"));
    e.drop = "blk.0.ffn_down_exps.weight";
    REQUIRE_THAT(load_edited("synth-qwen3moe-q8_0", e),
                 Catch::Contains("missing tensor 'blk.0.ffn_down_exps.weight'"));
}

TEST_CASE("a mis-shaped tensor is named with both shapes", "[hostile][arch]") {
    Edit e;
    e.reshape = "blk.2.attn_q.bias";
    e.shrink = 8;
    const std::string err = load_edited("synth-qwen2-q8_0", e);
    REQUIRE_THAT(err, Catch::Contains("tensor 'blk.2.attn_q.bias' has shape [120]"));
    REQUIRE_THAT(err, Catch::Contains("needs [128]"));
}

TEST_CASE("expert counts that disagree with the tensors or each other are refused", "[hostile][arch]") {
    Edit e;
    e.set["llama.expert_count"] = Value::u32(8);
    REQUIRE_THAT(load_edited("synth-llama-moe-q8_0", e),
                 Catch::Contains("holds 4 experts but the model metadata says expert_count 8"));
    Edit used;
    used.set["qwen3moe.expert_used_count"] = Value::u32(9);
    REQUIRE_THAT(load_edited("synth-qwen3moe-q8_0", used),
                 Catch::Contains("expert_used_count 9 exceeds expert_count 8"));
    Edit none;
    none.set["qwen3moe.expert_count"] = Value::u32(0);
    none.set["qwen3moe.expert_used_count"] = Value::u32(0);
    REQUIRE_THAT(load_edited("synth-qwen3moe-q8_0", none),
                 Catch::Contains("qwen3moe needs qwen3moe.expert_count"));
}

TEST_CASE("a sliding window larger than the context is refused", "[hostile][arch]") {
    Edit e;
    e.set["gemma2.attention.sliding_window"] = Value::u32(100000);
    REQUIRE_THAT(load_edited("synth-gemma2-q8_0", e),
                 Catch::Contains("attention.sliding_window 100000 exceeds the training context 2048"));
}
