// Test control vectors, written as llama.cpp's cvector-generator writes them: F32 tensors direction.N
// (N = 1 ..) of n_embd values, metadata controlvector.model_hint and controlvector.layer_count.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ggml/gguf.h"

namespace cvec_files {

inline std::string temp_path(const std::string& stem) {
    static int n = 0;
    return (std::filesystem::temp_directory_path() /
            ("ggserve-" + stem + "-" + std::to_string(getpid()) + "-" + std::to_string(n++) + ".gguf"))
        .string();
}

using Directions = std::map<int, std::vector<float>>;  // layer N -> values

inline std::string write(const Directions& dirs, const std::string& hint = "llama") {
    ggml::gguf::Writer w;
    w.set("general.architecture", ggml::gguf::Value::string("controlvector"));
    w.set("controlvector.model_hint", ggml::gguf::Value::string(hint));
    w.set("controlvector.layer_count", ggml::gguf::Value::i32((int32_t)dirs.size()));
    for (const auto& [il, v] : dirs) {
        const int64_t ne[1] = {(int64_t)v.size()};
        w.add_tensor("direction." + std::to_string(il), ggml::Type::F32, 1, ne, v.data(), v.size() * 4);
    }
    const std::string path = temp_path("cvec");
    w.write(path);
    return path;
}

// Random directions (normal, standard deviation sd) for layers 1 .. n_layer - 1.
inline Directions random(int n_layer, int64_t n_embd, uint32_t seed, float sd) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, sd);
    Directions d;
    for (int il = 1; il < n_layer; ++il) {
        std::vector<float> v((size_t)n_embd);
        for (float& x : v) x = nd(rng);
        d[il] = v;
    }
    return d;
}

inline Directions zeros(int n_layer, int64_t n_embd) {
    Directions d;
    for (int il = 1; il < n_layer; ++il) d[il] = std::vector<float>((size_t)n_embd, 0.0f);
    return d;
}

// a * sa + b * sb, layer by layer.
inline Directions scaled_sum(const Directions& a, float sa, const Directions& b, float sb) {
    Directions out;
    for (const auto& [il, v] : a)
        for (size_t j = 0; j < v.size(); ++j) out[il].resize(v.size()), out[il][j] += v[j] * sa;
    for (const auto& [il, v] : b)
        for (size_t j = 0; j < v.size(); ++j) out[il].resize(v.size()), out[il][j] += v[j] * sb;
    return out;
}

}  // namespace cvec_files
