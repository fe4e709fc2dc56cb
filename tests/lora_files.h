// Test LoRA adapters for a model file: random A and B for chosen weights, written as llama.cpp's
// converter writes them (general.type "adapter", adapter.type "lora", adapter.lora.alpha, tensors
// <weight>.lora_a [in, r] and <weight>.lora_b [r, out]), and the model with an adapter merged into its
// weights (W + scale * alpha / r * B A in double; without alpha, scale * B A), to check the graph's W x + s B (A x) against.
// F32 base weights only (stories260K).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ggml/gguf.h"

namespace lora_files {

inline std::string temp_path(const std::string& stem) {
    static int n = 0;
    return (std::filesystem::temp_directory_path() /
            ("ggserve-" + stem + "-" + std::to_string(getpid()) + "-" + std::to_string(n++) + ".gguf"))
        .string();
}

// Random adapter of rank r for the named weights of the model at base_path; a task name, when given, is
// written with a prompt prefix "<task>: ".
inline std::string write_adapter(const std::string& base_path, const std::vector<std::string>& targets, int r,
                                 float alpha, uint32_t seed, float sd = 0.1f, const std::string& task = "") {
    auto base = ggml::gguf::File::open(base_path);
    ggml::gguf::Writer w;
    w.set("general.architecture", ggml::gguf::Value::string(base->get_string("general.architecture")));
    w.set("general.type", ggml::gguf::Value::string("adapter"));
    w.set("adapter.type", ggml::gguf::Value::string("lora"));
    w.set("adapter.lora.alpha", ggml::gguf::Value::f32(alpha));
    if (!task.empty()) {
        w.set("adapter.lora.task_name", ggml::gguf::Value::string(task));
        w.set("adapter.lora.prompt_prefix", ggml::gguf::Value::string(task + ": "));
    }
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, sd);
    for (const std::string& name : targets) {
        const ggml::gguf::TensorInfo* t = base->find_tensor(name);
        if (!t || t->n_dims != 2) throw std::runtime_error("no matrix " + name);
        const int64_t in = t->ne[0], out = t->ne[1];
        std::vector<float> a((size_t)(in * r)), b((size_t)(r * out));
        for (float& x : a) x = nd(rng);
        for (float& x : b) x = nd(rng);
        const int64_t ne_a[2] = {in, r}, ne_b[2] = {r, out};
        w.add_tensor(name + ".lora_a", ggml::Type::F32, 2, ne_a, a.data(), a.size() * 4);
        w.add_tensor(name + ".lora_b", ggml::Type::F32, 2, ne_b, b.data(), b.size() * 4);
    }
    const std::string path = temp_path("lora");
    w.write(path);
    return path;
}

// The base model with each adapter's B A (scaled by scales[i] * alpha / r) added to its weights.
inline std::string write_merged(const std::string& base_path, const std::vector<std::string>& adapters,
                                const std::vector<float>& scales) {
    auto base = ggml::gguf::File::open(base_path);
    ggml::gguf::Writer w;
    w.set_alignment(base->alignment());
    for (const auto& [k, v] : base->metadata()) w.set(k, v);
    std::vector<std::unique_ptr<ggml::gguf::File>> lora;
    for (const auto& p : adapters) lora.push_back(ggml::gguf::File::open(p));
    for (const auto& t : base->tensors()) {
        std::vector<double> merged;
        for (size_t i = 0; i < lora.size(); ++i) {
            const ggml::gguf::TensorInfo* a = lora[i]->find_tensor(t.name + ".lora_a");
            const ggml::gguf::TensorInfo* b = lora[i]->find_tensor(t.name + ".lora_b");
            if (!a) continue;
            if (t.type != ggml::Type::F32) throw std::runtime_error("write_merged: F32 weights only");
            const int64_t in = t.ne[0], out = t.ne[1], r = a->ne[1];
            if (merged.empty()) merged.assign((const float*)t.data, (const float*)t.data + in * out);
            const double alpha = lora[i]->get_float("adapter.lora.alpha", 0.0);
            const double f = scales[i] * (alpha != 0.0 ? alpha / (double)r : 1.0);  // no alpha: the scale alone
            const float* A = (const float*)a->data;  // A[k][j]: row k of r rows of `in`
            const float* B = (const float*)b->data;  // B[o][k]: row o of `out` rows of r
            for (int64_t o = 0; o < out; ++o)
                for (int64_t j = 0; j < in; ++j) {
                    double d = 0;
                    for (int64_t k = 0; k < r; ++k) d += (double)B[o * r + k] * A[k * in + j];
                    merged[(size_t)(o * in + j)] += f * d;
                }
        }
        if (merged.empty()) {
            w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data, t.size);
        } else {
            std::vector<float> f(merged.begin(), merged.end());
            w.add_tensor(t.name, t.type, t.n_dims, t.ne, f.data(), f.size() * 4);
        }
    }
    const std::string path = temp_path("merged");
    w.write(path);
    return path;
}

}  // namespace lora_files
