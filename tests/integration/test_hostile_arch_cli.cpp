// Hostile architecture files through the commands a user runs (issue 12): a synth model rewritten with
// expert counts that disagree with its tensors, a sliding window longer than its training context, an
// unknown architecture. `run`, `serve` and `bench` stop with exit code 1 and the reason (never a crash);
// `info` still describes the file and says why this build cannot load it.
#include <catch2/catch.hpp>
#include <string>

#include "cli_process.h"
#include "context_util.h"
#include "ggml/gguf.h"
#include "server_process.h"

namespace {

// `name` from ../shared/models/synth with metadata `key` set to `value`, written to `path`.
void write_edited(const std::string& name, const std::string& key, const ggml::gguf::Value& value,
                  const std::string& path) {
    auto f = ggml::gguf::File::open(shared_path("models/synth/" + name + ".gguf"));
    ggml::gguf::Writer w;
    w.set_alignment(f->alignment());
    for (const auto& [k, v] : f->metadata())
        if (k != "GGUF.alignment" && k != key) w.set(k, v);
    w.set(key, value);
    for (const auto& t : f->tensors()) w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data, t.size);
    w.write(path);
}

}  // namespace

TEST_CASE("hostile architecture files stop run, serve and bench with exit code 1 and the reason",
          "[integration][cli][hostile]") {
    using ggml::gguf::Value;
    struct Case {
        const char* model;
        const char* key;
        Value value;
        const char* says;
    };
    const Case cases[] = {
        {"synth-qwen3moe-q8_0", "qwen3moe.expert_count", Value::u32(6),
         "tensor 'blk.0.ffn_gate_inp.weight' holds 8 experts but the model metadata says expert_count 6"},
        {"synth-llama-moe-q8_0", "llama.expert_used_count", Value::u32(0),
         "expert_used_count must be positive when expert_count is set"},
        {"synth-gemma2-q8_0", "gemma2.attention.sliding_window", Value::u32(100000),
         "attention.sliding_window 100000 exceeds the training context 2048"},
        {"synth-qwen2-q8_0", "general.architecture", Value::string("mamba9"),
         "unsupported model architecture 'mamba9'"},
    };
    ctxtest::TempDir dir;
    for (const Case& c : cases) {
        const std::string path = dir.file(std::string(c.model) + ".gguf");
        write_edited(c.model, c.key, c.value, path);
        for (const std::string cmd : {"run -p Hello -n 4", "serve --port 0", "bench -p 8 -n 2 -r 1"}) {
            INFO(c.model << " with " << c.key << ": ggserve " << cmd);
            const CliResult r = run_ggserve(cmd + " -t 1 -m " + path);
            INFO(r.output);
            CHECK(r.code == 1);
            CHECK(r.output.find(c.says) != std::string::npos);
        }
        // info describes the file and why it does not load (metadata problems; it reads no weights)
        if (std::string(c.key) != "qwen3moe.expert_count") {
            const CliResult r = run_ggserve("info -m " + path);
            INFO(r.output);
            CHECK(r.code == 0);
            CHECK(r.output.find(std::string("model: not loadable by this build: ")) != std::string::npos);
            CHECK(r.output.find(c.says) != std::string::npos);
        }
    }
}
