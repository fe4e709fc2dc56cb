// The kernels of each instruction-set level, by name. kernels_dispatch.cpp puts them in one table.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels.h"

// Declares the dot product and tile kernel of a weight type.
#define GGML_DECLARE_DOT(name)                                                                            \
    void vec_dot_##name(int64_t n, float* s, const void* x, const void* y);                               \
    void gemm_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, \
                     int nr, int nc)
// Decode kernels: 1 to a few activation columns, column c's outputs at s + c * ldc.
#define GGML_DECLARE_DECODE_COLUMNS(name)                                                                \
    void decode_columns_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, \
                               size_t by, int nr, int nc)
#define GGML_DECLARE_TO_FLOAT(name) void to_float_##name(const void* x, float* y, int64_t n)
#define GGML_DECLARE_QUANTIZE(name) void quantize_##name(const float* x, void* y, int64_t n)

namespace ggml::cpu {

namespace scalar {
// The reference dot product called for every (r, c): the scalar level's tile kernel.
template <VecDotFn dot>
void gemm_by_vec_dot(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                     int nr, int nc) {
    for (int c = 0; c < nc; ++c)
        for (int r = 0; r < nr; ++r)
            dot(n, s + size_t(c) * ldc + size_t(r), static_cast<const char*>(x) + size_t(r) * bx,
                static_cast<const char*>(y) + size_t(c) * by);
}
void f16_to_f32_row(const uint16_t* x, float* y, int64_t n);
void axpy_f32(int64_t n, float a, const float* x, float* y);
}  // namespace scalar

#if defined(__x86_64__)
// AVX2 + FMA + F16C.
namespace avx2 {
GGML_DECLARE_DOT(f32);
GGML_DECLARE_DOT(f16);
GGML_DECLARE_DOT(bf16);
GGML_DECLARE_DOT(q4_0);
GGML_DECLARE_DOT(q4_1);
GGML_DECLARE_DOT(q5_0);
GGML_DECLARE_DOT(q5_1);
GGML_DECLARE_DOT(q8_0);
GGML_DECLARE_DOT(iq4_nl);
GGML_DECLARE_DOT(q2_K);
GGML_DECLARE_DOT(q3_K);
GGML_DECLARE_DOT(q4_K);
GGML_DECLARE_DOT(q5_K);
GGML_DECLARE_DOT(q6_K);
GGML_DECLARE_DOT(mxfp4);
// The IQ and TQ dot products (vec_dot_iq_avx2.cpp); their tiles call vec_dot per output.
void vec_dot_iq2_xxs(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq2_xs(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq2_s(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq3_xxs(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq3_s(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq1_s(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq1_m(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq4_xs(int64_t n, float* s, const void* x, const void* y);
void vec_dot_tq1_0(int64_t n, float* s, const void* x, const void* y);
void vec_dot_tq2_0(int64_t n, float* s, const void* x, const void* y);
GGML_DECLARE_QUANTIZE(q8_0);
GGML_DECLARE_QUANTIZE(q8_1);
GGML_DECLARE_QUANTIZE(q8_K);
GGML_DECLARE_QUANTIZE(f16);
GGML_DECLARE_QUANTIZE(bf16);
GGML_DECLARE_TO_FLOAT(f16);
GGML_DECLARE_TO_FLOAT(bf16);
GGML_DECLARE_TO_FLOAT(q4_0);
GGML_DECLARE_TO_FLOAT(q4_1);
GGML_DECLARE_TO_FLOAT(q5_0);
GGML_DECLARE_TO_FLOAT(q5_1);
GGML_DECLARE_TO_FLOAT(q8_0);
GGML_DECLARE_TO_FLOAT(iq4_nl);
GGML_DECLARE_TO_FLOAT(q2_K);
GGML_DECLARE_TO_FLOAT(q3_K);
GGML_DECLARE_TO_FLOAT(q4_K);
GGML_DECLARE_TO_FLOAT(q5_K);
GGML_DECLARE_TO_FLOAT(q6_K);
void f16_to_f32_row(const uint16_t* x, float* y, int64_t n);
void axpy_f32(int64_t n, float a, const float* x, float* y);
}  // namespace avx2

// AVX-512 F, BW, VL, DQ and VNNI (plus AVX2, FMA, F16C).
namespace avx512 {
GGML_DECLARE_DOT(f32);
GGML_DECLARE_DOT(f16);
GGML_DECLARE_DOT(q4_0);
GGML_DECLARE_DOT(q4_1);
GGML_DECLARE_DOT(q5_0);
GGML_DECLARE_DOT(q5_1);
GGML_DECLARE_DOT(q8_0);
GGML_DECLARE_DOT(iq4_nl);
GGML_DECLARE_DOT(mxfp4);
GGML_DECLARE_DOT(q2_K);
GGML_DECLARE_DOT(q3_K);
GGML_DECLARE_DOT(q4_K);
GGML_DECLARE_DOT(q5_K);
GGML_DECLARE_DOT(q6_K);
GGML_DECLARE_QUANTIZE(q8_0);
GGML_DECLARE_QUANTIZE(q8_1);
GGML_DECLARE_QUANTIZE(q8_K);
GGML_DECLARE_QUANTIZE(f16);
GGML_DECLARE_QUANTIZE(bf16);
GGML_DECLARE_TO_FLOAT(f16);
GGML_DECLARE_TO_FLOAT(bf16);
void f16_to_f32_row(const uint16_t* x, float* y, int64_t n);
void axpy_f32(int64_t n, float a, const float* x, float* y);
// Decode kernels (gemm_decode_avx512.cpp): s[c * ldc + r] = dot(row r, column c) for r < nr and c < nc, rows
// bx and columns by bytes apart. The 32-value block formats take 1 to kMaxDecodeColumns columns.
constexpr int kMaxDecodeColumns = 4;
GGML_DECLARE_DECODE_COLUMNS(q4_0);
GGML_DECLARE_DECODE_COLUMNS(q4_1);
GGML_DECLARE_DECODE_COLUMNS(q5_0);
GGML_DECLARE_DECODE_COLUMNS(q5_1);
GGML_DECLARE_DECODE_COLUMNS(q8_0);
GGML_DECLARE_DECODE_COLUMNS(iq4_nl);
GGML_DECLARE_DECODE_COLUMNS(mxfp4);
// The super-block formats: 1 or kMaxSuperblockDecodeColumns columns (their per-column work is most of a
// block's, so more columns go to the tile engine).
constexpr int kMaxSuperblockDecodeColumns = 2;
GGML_DECLARE_DECODE_COLUMNS(q4_K);
GGML_DECLARE_DECODE_COLUMNS(q5_K);
GGML_DECLARE_DECODE_COLUMNS(q6_K);
GGML_DECLARE_DECODE_COLUMNS(iq4_xs);
// Tile kernels of IQ4_XS and of the grid and ternary formats (gemm_iq_avx512.cpp); their dot products are the AVX2 ones.
#define GGML_DECLARE_GEMM_ONLY(name)                                                                      \
    void gemm_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, \
                     int nr, int nc)
GGML_DECLARE_GEMM_ONLY(iq4_xs);
GGML_DECLARE_GEMM_ONLY(iq3_s);
GGML_DECLARE_GEMM_ONLY(iq3_xxs);
GGML_DECLARE_GEMM_ONLY(iq2_xxs);
GGML_DECLARE_GEMM_ONLY(iq2_xs);
GGML_DECLARE_GEMM_ONLY(iq2_s);
GGML_DECLARE_GEMM_ONLY(iq1_s);
GGML_DECLARE_GEMM_ONLY(iq1_m);
GGML_DECLARE_GEMM_ONLY(tq1_0);
GGML_DECLARE_GEMM_ONLY(tq2_0);
#undef GGML_DECLARE_GEMM_ONLY
}  // namespace avx512

// AMX (tiles + INT8) on top of AVX-512: tile kernels only (gemm_amx.cpp); their dot products are the
// AVX-512 ones. supported() checks CPUID and asks the OS for the tile data state (amx_perm.cpp).
namespace amx {
bool supported();
// Asks the kernel for permission to use the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM); true once
// granted. Call it in a thread before its first tile instruction.
bool request_permission();
#define GGML_DECLARE_GEMM(name)                                                                           \
    void gemm_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, \
                     int nr, int nc)
GGML_DECLARE_GEMM(q4_0);
GGML_DECLARE_GEMM(q4_1);
GGML_DECLARE_GEMM(q5_0);
GGML_DECLARE_GEMM(q5_1);
GGML_DECLARE_GEMM(q8_0);
GGML_DECLARE_GEMM(iq4_nl);
GGML_DECLARE_GEMM(q4_K);
GGML_DECLARE_GEMM(q5_K);
#undef GGML_DECLARE_GEMM
}  // namespace amx

// AVX-512 BF16 (vdpbf16ps); used for BF16 weights at the AVX-512 level when the CPU has it.
namespace avx512bf16 {
GGML_DECLARE_DOT(bf16);
}  // namespace avx512bf16
#endif

}  // namespace ggml::cpu

#undef GGML_DECLARE_DOT
#undef GGML_DECLARE_TO_FLOAT
#undef GGML_DECLARE_DECODE_COLUMNS
#undef GGML_DECLARE_QUANTIZE
