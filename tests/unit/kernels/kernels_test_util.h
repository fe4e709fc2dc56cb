// Shared helpers of the kernel tests: deterministic random rows, every weight type, every level.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ggml/quants.h"
#include "ggml/src/cpu/kernels.h"
#include "../quants/random_blocks.h"

namespace kernels_test {

using ggml::Type;
using ggml::cpu::IsaLevel;

inline const std::vector<Type>& weight_types() {
    static const std::vector<Type> t = {
        Type::F32,    Type::F16,     Type::BF16,   Type::Q4_0,  Type::Q4_1,    Type::Q5_0,  Type::Q5_1,
        Type::Q8_0,   Type::Q2_K,    Type::Q3_K,   Type::Q4_K,  Type::Q5_K,    Type::Q6_K,  Type::IQ4_NL,
        Type::IQ4_XS, Type::IQ2_XXS, Type::IQ2_XS, Type::IQ2_S, Type::IQ3_XXS, Type::IQ3_S, Type::IQ1_S,
        Type::IQ1_M,  Type::TQ1_0,   Type::TQ2_0,  Type::MXFP4};
    return t;
}

// The levels this CPU can run, lowest first.
inline std::vector<IsaLevel> levels() {
    std::vector<IsaLevel> out;
    for (IsaLevel l : {IsaLevel::Scalar, IsaLevel::Avx2, IsaLevel::Avx512, IsaLevel::Amx})
        if (int(l) <= int(ggml::cpu::detected_isa_level())) out.push_back(l);
    return out;
}

// Forces a level for one scope, then restores the previous one.
struct LevelScope {
    IsaLevel saved = ggml::cpu::isa_level();
    explicit LevelScope(IsaLevel l) { ggml::cpu::set_isa_level_for_testing(l); }
    ~LevelScope() { ggml::cpu::set_isa_level_for_testing(saved); }
};

inline std::vector<float> normal_floats(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

inline bool is_block_format(Type t) {
    return ggml::type_traits(t).is_quantized;
}

inline Type activation_type(Type weight) {
    return ggml::type_traits(weight).vec_dot_type;
}

inline std::vector<uint8_t> random_block_rows(Type t, int64_t n, int rows, size_t stride, uint32_t seed);

// Rows of n values of type t quantized (reference quantizer) from N(0, 1) data, `stride` bytes apart.
// Types without a quantizer (those llama.cpp quantizes only with an importance matrix) get random blocks.
inline std::vector<uint8_t> quantized_rows(Type t, int64_t n, int rows, size_t stride, uint32_t seed) {
    if (!ggml::type_traits(t).from_float_ref) return random_block_rows(t, n, rows, stride, seed);
    std::vector<uint8_t> out(stride * size_t(rows) + 64);
    const std::vector<float> x = normal_floats(size_t(n) * size_t(rows), seed);
    for (int r = 0; r < rows; ++r)
        ggml::type_traits(t).from_float_ref(x.data() + size_t(r) * size_t(n), out.data() + size_t(r) * stride,
                                            n);
    return out;
}

// Weight rows of block type t made of random bytes, with finite half scales: every level pattern,
// sub-block scale and sign combination, not only what the quantizers produce.
inline std::vector<uint8_t> random_block_rows(Type t, int64_t n, int rows, size_t stride, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> out(stride * size_t(rows) + 64);
    for (uint8_t& b : out) b = uint8_t(rng());
    const size_t bs = ggml::type_size(t);
    for (int r = 0; r < rows; ++r)
        for (int64_t i = 0; i < n / ggml::block_size(t); ++i)
            quant_test::randomize_block(t, out.data() + size_t(r) * stride + size_t(i) * bs, rng);
    return out;
}

// Float rows (F32/F16/BF16) with N(0, 1) values.
inline std::vector<uint8_t> float_rows(Type t, int64_t n, int rows, size_t stride, uint32_t seed) {
    return quantized_rows(t, n, rows, stride, seed);
}

}  // namespace kernels_test
