// Which kernel runs: the instruction-set level (CPUID, capped by GGML_CPU_FEATURES) and one table per
// kind of kernel, one row per type, one column per level. A missing entry falls back to the level below.
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ggml/quants.h"
#include "kernels.h"
#include "kernels_levels.h"

namespace ggml::cpu {

namespace scalar {
void f16_to_f32_row(const uint16_t* x, float* y, int64_t n) {
    fp16_to_fp32_row(x, y, n);
}
}  // namespace scalar

namespace {

constexpr int kLevels = 4;

struct DotKernels {
    VecDotFn vec_dot;
    GemmTileFn gemm;
};
struct DotRow {
    Type type;
    DotKernels level[kLevels];
};
struct ToFloatRow {
    Type type;
    ToFloatFn level[kLevels];
};
struct QuantizeRow {
    Type type;
    FromFloatFn level[kLevels];
};

// clang-format off
#define REF(dot) DotKernels{dot, scalar::gemm_by_vec_dot<dot>}
#if defined(__x86_64__)
#define SIMD(ns, name) DotKernels{ns::vec_dot_##name, ns::gemm_##name}
#define AMX(name) DotKernels{avx512::vec_dot_##name, amx::gemm_##name}
#define SIMD_DOT(ns, name) DotKernels{ns::vec_dot_##name, scalar::gemm_by_vec_dot<ns::vec_dot_##name>}
#define X86(fn) fn
#define SIMD_DOT_GEMM(dot_ns, gemm_ns, name) DotKernels{dot_ns::vec_dot_##name, gemm_ns::gemm_##name}
#else
#define SIMD(ns, name) DotKernels{nullptr, nullptr}
#define AMX(name) DotKernels{nullptr, nullptr}
#define SIMD_DOT(ns, name) DotKernels{nullptr, nullptr}
#define X86(fn) nullptr
#define SIMD_DOT_GEMM(dot_ns, gemm_ns, name) DotKernels{nullptr, nullptr}
#endif

// Weight type -> dot product and tile kernel.
const DotRow kDots[] = {
    //             scalar                          AVX2                 AVX-512                 AMX
    {Type::F32,    {REF(vec_dot_f32_ref),          SIMD(avx2, f32),     SIMD(avx512, f32)}},
    {Type::F16,    {REF(vec_dot_f16_ref),          SIMD(avx2, f16),     SIMD(avx512, f16)}},
    {Type::BF16,   {REF(vec_dot_bf16_ref),         SIMD(avx2, bf16),    SIMD(avx512bf16, bf16)}},  // (*)
    {Type::Q4_0,   {REF(vec_dot_q4_0_q8_0_ref),    SIMD(avx2, q4_0),    SIMD(avx512, q4_0), AMX(q4_0)}},
    {Type::Q4_1,   {REF(vec_dot_q4_1_q8_1_ref),    SIMD(avx2, q4_1),    SIMD(avx512, q4_1), AMX(q4_1)}},
    {Type::Q5_0,   {REF(vec_dot_q5_0_q8_0_ref),    SIMD(avx2, q5_0),    SIMD(avx512, q5_0), AMX(q5_0)}},
    {Type::Q5_1,   {REF(vec_dot_q5_1_q8_1_ref),    SIMD(avx2, q5_1),    SIMD(avx512, q5_1), AMX(q5_1)}},
    {Type::Q8_0,   {REF(vec_dot_q8_0_q8_0_ref),    SIMD(avx2, q8_0),    SIMD(avx512, q8_0), AMX(q8_0)}},
    {Type::Q2_K,   {REF(vec_dot_q2_K_q8_K_ref),    SIMD(avx2, q2_K),    SIMD(avx512, q2_K)}},
    {Type::Q3_K,   {REF(vec_dot_q3_K_q8_K_ref),    SIMD(avx2, q3_K),    SIMD(avx512, q3_K)}},
    {Type::Q4_K,   {REF(vec_dot_q4_K_q8_K_ref),    SIMD(avx2, q4_K),    SIMD(avx512, q4_K), AMX(q4_K)}},
    {Type::Q5_K,   {REF(vec_dot_q5_K_q8_K_ref),    SIMD(avx2, q5_K),    SIMD(avx512, q5_K), AMX(q5_K)}},
    {Type::Q6_K,   {REF(vec_dot_q6_K_q8_K_ref),    SIMD(avx2, q6_K),    SIMD(avx512, q6_K)}},
    {Type::IQ4_NL, {REF(vec_dot_iq4_nl_q8_0_ref),  SIMD(avx2, iq4_nl),  SIMD(avx512, iq4_nl), AMX(iq4_nl)}},
    {Type::MXFP4,  {REF(vec_dot_mxfp4_q8_0_ref),   SIMD(avx2, mxfp4),   SIMD(avx512, mxfp4)}},
    // IQ4_XS and the grid and ternary formats: AVX2's dot products at both levels, AVX-512 tiles and
    // kernels for one to a few columns.
    {Type::IQ4_XS,  {REF(vec_dot_iq4_xs_q8_K_ref),  SIMD_DOT(avx2, iq4_xs),
                     SIMD_DOT_GEMM(avx2, avx512, iq4_xs)}},
    {Type::IQ2_XXS, {REF(vec_dot_iq2_xxs_q8_K_ref), SIMD_DOT(avx2, iq2_xxs), SIMD_DOT_GEMM(avx2, avx512, iq2_xxs)}},
    {Type::IQ2_XS,  {REF(vec_dot_iq2_xs_q8_K_ref),  SIMD_DOT(avx2, iq2_xs),  SIMD_DOT_GEMM(avx2, avx512, iq2_xs)}},
    {Type::IQ2_S,   {REF(vec_dot_iq2_s_q8_K_ref),   SIMD_DOT(avx2, iq2_s),   SIMD_DOT_GEMM(avx2, avx512, iq2_s)}},
    {Type::IQ3_XXS, {REF(vec_dot_iq3_xxs_q8_K_ref), SIMD_DOT(avx2, iq3_xxs), SIMD_DOT_GEMM(avx2, avx512, iq3_xxs)}},
    {Type::IQ3_S,   {REF(vec_dot_iq3_s_q8_K_ref),   SIMD_DOT(avx2, iq3_s),   SIMD_DOT_GEMM(avx2, avx512, iq3_s)}},
    {Type::IQ1_S,   {REF(vec_dot_iq1_s_q8_K_ref),   SIMD_DOT(avx2, iq1_s),   SIMD_DOT_GEMM(avx2, avx512, iq1_s)}},
    {Type::IQ1_M,   {REF(vec_dot_iq1_m_q8_K_ref),   SIMD_DOT(avx2, iq1_m),   SIMD_DOT_GEMM(avx2, avx512, iq1_m)}},
    {Type::TQ1_0,   {REF(vec_dot_tq1_0_q8_K_ref),   SIMD_DOT(avx2, tq1_0),   SIMD_DOT_GEMM(avx2, avx512, tq1_0)}},
    {Type::TQ2_0,   {REF(vec_dot_tq2_0_q8_K_ref),   SIMD_DOT(avx2, tq2_0),   SIMD_DOT_GEMM(avx2, avx512, tq2_0)}},
};
// (*) needs the AVX512_BF16 extension too; on AVX-512 CPUs without it the AVX2 kernels run.
// The AMX level has tile kernels of its own for the 32-value block formats, Q4_K and Q5_K only; every other entry of
// this and the tables below is empty there and falls back to AVX-512.

// Row type -> dequantizer. At the AVX-512 level the block formats use the AVX2 dequantizers.
const ToFloatRow kToFloat[] = {
    //             scalar                  AVX2                         AVX-512
    {Type::F32,    {f32_copy_row,          nullptr,                     nullptr}},
    {Type::F16,    {fp16_to_fp32_row,      X86(avx2::to_float_f16),     X86(avx512::to_float_f16)}},
    {Type::BF16,   {bf16_to_fp32_row,      X86(avx2::to_float_bf16),    X86(avx512::to_float_bf16)}},
    {Type::Q4_0,   {dequantize_row_q4_0,   X86(avx2::to_float_q4_0),    nullptr}},
    {Type::Q4_1,   {dequantize_row_q4_1,   X86(avx2::to_float_q4_1),    nullptr}},
    {Type::Q5_0,   {dequantize_row_q5_0,   X86(avx2::to_float_q5_0),    nullptr}},
    {Type::Q5_1,   {dequantize_row_q5_1,   X86(avx2::to_float_q5_1),    nullptr}},
    {Type::Q8_0,   {dequantize_row_q8_0,   X86(avx2::to_float_q8_0),    nullptr}},
    {Type::Q8_1,   {dequantize_row_q8_1,   nullptr,                     nullptr}},
    {Type::Q2_K,   {dequantize_row_q2_K,   X86(avx2::to_float_q2_K),    nullptr}},
    {Type::Q3_K,   {dequantize_row_q3_K,   X86(avx2::to_float_q3_K),    nullptr}},
    {Type::Q4_K,   {dequantize_row_q4_K,   X86(avx2::to_float_q4_K),    nullptr}},
    {Type::Q5_K,   {dequantize_row_q5_K,   X86(avx2::to_float_q5_K),    nullptr}},
    {Type::Q6_K,   {dequantize_row_q6_K,   X86(avx2::to_float_q6_K),    nullptr}},
    {Type::Q8_K,   {dequantize_row_q8_K,   nullptr,                     nullptr}},
    {Type::IQ4_NL, {dequantize_row_iq4_nl, X86(avx2::to_float_iq4_nl),  nullptr}},
};

// Activation type -> quantizer (other types keep their reference quantizer from the type traits).
const QuantizeRow kQuantize[] = {
    //           scalar                  AVX2                        AVX-512
    {Type::F32,  {f32_from_float_row,    nullptr,                    nullptr}},
    {Type::F16,  {fp32_to_fp16_row,      X86(avx2::quantize_f16),    X86(avx512::quantize_f16)}},
    {Type::BF16, {fp32_to_bf16_row,      X86(avx2::quantize_bf16),   X86(avx512::quantize_bf16)}},
    {Type::Q8_0, {quantize_row_q8_0_ref, X86(avx2::quantize_q8_0),   X86(avx512::quantize_q8_0)}},
    {Type::Q8_1, {quantize_row_q8_1_ref, X86(avx2::quantize_q8_1),   X86(avx512::quantize_q8_1)}},
    {Type::Q8_K, {quantize_row_q8_K_ref, X86(avx2::quantize_q8_K),   X86(avx512::quantize_q8_K)}},
};

using F16RowFn = void (*)(const uint16_t*, float*, int64_t);
using AxpyFn = void (*)(int64_t, float, const float*, float*);
const F16RowFn kF16Row[kLevels] = {scalar::f16_to_f32_row, X86(avx2::f16_to_f32_row), X86(avx512::f16_to_f32_row)};
const AxpyFn kAxpy[kLevels] = {scalar::axpy_f32, X86(avx2::axpy_f32), X86(avx512::axpy_f32)};
// clang-format on

#undef REF
#undef SIMD
#undef AMX
#undef SIMD_DOT
#undef SIMD_DOT_GEMM
#undef X86

struct Cpu {
    IsaLevel level = IsaLevel::Scalar;
    bool bf16 = false;  // AVX512_BF16
};

Cpu detect_cpu() {
    Cpu cpu;
#if defined(__x86_64__)
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                      __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi") &&
                      __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512vnni");
    cpu.level = avx512 ? IsaLevel::Avx512 : avx2 ? IsaLevel::Avx2 : IsaLevel::Scalar;
    if (avx512 && amx::supported()) cpu.level = IsaLevel::Amx;
    cpu.bf16 = avx512 && __builtin_cpu_supports("avx512bf16");
#endif
    return cpu;
}

const Cpu& cpu() {
    static const Cpu c = detect_cpu();
    return c;
}

std::atomic<int> g_level{-1};  // -1: not chosen yet

int level_index() {
    int level = g_level.load(std::memory_order_relaxed);
    if (level < 0) {
        level = int(isa_level_capped(cpu().level, std::getenv("GGML_CPU_FEATURES")));
        g_level.store(level, std::memory_order_relaxed);
    }
    return level;
}

template <class Row>
const Row* find_row(const Row* rows, size_t count, Type t) {
    for (size_t i = 0; i < count; ++i)
        if (rows[i].type == t) return &rows[i];
    return nullptr;
}

// The dot kernels of a type at the current level.
const DotKernels* dot_kernels(Type t) {
    const DotRow* row = find_row(kDots, std::size(kDots), t);
    if (!row) return nullptr;
    for (int level = level_index(); level >= 0; --level) {
        if (t == Type::BF16 && level >= int(IsaLevel::Avx512) && !cpu().bf16) continue;
        if (row->level[level].vec_dot) return &row->level[level];
    }
    return nullptr;
}

template <class Row, class Fn>
Fn pick(const Row* rows, size_t count, Type t, Fn fallback) {
    const Row* row = find_row(rows, count, t);
    if (!row) return fallback;
    for (int level = level_index(); level >= 0; --level)
        if (row->level[level]) return row->level[level];
    return fallback;
}

}  // namespace

IsaLevel isa_level() {
    return IsaLevel(level_index());
}

IsaLevel detected_isa_level() {
    return cpu().level;
}

void set_isa_level_for_testing(IsaLevel level) {
    g_level.store(int(level) < int(cpu().level) ? int(level) : int(cpu().level), std::memory_order_relaxed);
}

const char* isa_level_name(IsaLevel level) {
    switch (level) {
        case IsaLevel::Scalar:
            return "scalar";
        case IsaLevel::Avx2:
            return "avx2";
        case IsaLevel::Avx512:
            return "avx512";
        case IsaLevel::Amx:
            return "amx";
    }
    return "unknown";
}

IsaLevel isa_level_capped(IsaLevel detected, const char* env) {
    if (!env || !*env) return detected;
    for (int level = 0; level < kLevels; ++level) {
        if (std::strcmp(env, isa_level_name(IsaLevel(level))) == 0)
            return level < int(detected) ? IsaLevel(level) : detected;
    }
    std::fprintf(stderr, "ggml: ignoring GGML_CPU_FEATURES=%s (expected scalar, avx2, avx512 or amx)\n", env);
    return detected;
}

VecDotFn vec_dot(Type weight_type) {
    const DotKernels* k = dot_kernels(weight_type);
    return k ? k->vec_dot : nullptr;
}

GemmTileFn gemm_tile_fn(Type weight_type) {
    const DotKernels* k = dot_kernels(weight_type);
    return k ? k->gemm : nullptr;
}

void gemm_tile(Type weight_type, int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y,
               size_t by, int nr, int nc) {
    gemm_tile_fn(weight_type)(n, s, ldc, x, bx, y, by, nr, nc);
}

FromFloatFn quantize_activations(Type vec_dot_type) {
    return pick(kQuantize, std::size(kQuantize), vec_dot_type, type_traits(vec_dot_type).from_float_ref);
}

ToFloatFn to_float(Type type) {
    return pick(kToFloat, std::size(kToFloat), type, type_traits(type).to_float);
}

void f16_to_f32_row(const uint16_t* x, float* y, int64_t n) {
    for (int level = level_index(); level >= 0; --level)
        if (kF16Row[level]) return kF16Row[level](x, y, n);
}

void axpy_f32(int64_t n, float a, const float* x, float* y) {
    for (int level = level_index(); level >= 0; --level)
        if (kAxpy[level]) return kAxpy[level](n, a, x, y);
}

}  // namespace ggml::cpu
