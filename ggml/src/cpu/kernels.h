// CPU compute kernels chosen at run time from the instruction set (scalar, AVX2, AVX-512, AMX).
//
// Every function returned here is chosen for the current level: the best the CPU supports, capped by the
// environment variable GGML_CPU_FEATURES=scalar|avx2|avx512|amx (read once) or by set_isa_level_for_testing.
//
// Numerics (see docs/quantization.md and docs/performance.md):
// - Block-quantized weights (Q4_0 ... IQ4_NL, the IQ/TQ/MXFP4 formats): vec_dot and gemm_tile return exactly the bits of the scalar
//   reference vec_dot_*_ref at every level; integer block sums are exact and the float steps are the
//   reference's, in its order. Outputs therefore never depend on the level, the tile shape or the batch.
//   Activation quants must lie in [-127, 127] and Q8_K bsums must equal their quant sums (both always
//   hold for rows written by the quantizers below).
// - F32, F16, BF16 weights: lane-parallel float sums, within a few ulps * n of the double-precision
//   reference; gemm_tile equals vec_dot bit for bit at the same level.
// - quantize_activations and to_float produce exactly the reference bytes/floats at every level.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ggml/types.h"

namespace ggml::cpu {

// Amx: AVX-512 plus the AMX tile unit (AMX-TILE, AMX-INT8, granted by the OS): the AVX-512 kernels
// everywhere except the prefill tiles of the 32-value block formats.
enum class IsaLevel { Scalar, Avx2, Avx512, Amx };

// Level in use: detected, capped by GGML_CPU_FEATURES, or as forced by set_isa_level_for_testing.
IsaLevel isa_level();
// What this CPU supports, ignoring any cap.
IsaLevel detected_isa_level();
// Forces a level (clamped to what the CPU supports); tests use it to run every level.
void set_isa_level_for_testing(IsaLevel level);
const char* isa_level_name(IsaLevel level);
// The level for a CPU supporting `detected` under the cap `env` (GGML_CPU_FEATURES; nullptr or an
// unknown name: no cap).
IsaLevel isa_level_capped(IsaLevel detected, const char* env);

// s[c * ldc + r] = dot(row r of x, column c of y) for r < nr, c < nc; row r starts x + r * bx bytes,
// column c (of the paired activation type) y + c * by bytes. Bit-identical to vec_dot per (r, c).
using GemmTileFn = void (*)(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y,
                            size_t by, int nr, int nc);

// Dot product of a weight row with an activation row of type_traits(weight_type).vec_dot_type;
// nullptr for types without one.
VecDotFn vec_dot(Type weight_type);
// Tile kernel for prefill and decode. Weight blocks are unpacked once per 16 rows (8 at AVX2) and reused
// by all nc columns, so give it whole row ranges (multiples of 16) and all columns at once; with nc == 1
// it is also the fastest decode path for the block formats. Safe to call from several threads at once.
GemmTileFn gemm_tile_fn(Type weight_type);
void gemm_tile(Type weight_type, int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y,
               size_t by, int nr, int nc);
// Quantizes float rows to an activation type (Q8_0, Q8_1, Q8_K, F16, BF16, F32): exactly the bytes of
// the reference quantizer. Other types get their reference quantizer; nullptr if there is none.
FromFloatFn quantize_activations(Type vec_dot_type);
// Dequantizes a row (get_rows, cache reads): exactly the values of the reference dequantizer.
ToFloatFn to_float(Type type);

// Helpers for attention. f16_to_f32_row equals fp16_to_fp32 per element. axpy_f32 computes
// y[i] = y[i] + a * x[i] with the product rounded before the sum, so the result depends only on the
// inputs (not on the level, alignment or n).
void f16_to_f32_row(const uint16_t* x, float* y, int64_t n);
void axpy_f32(int64_t n, float a, const float* x, float* y);

}  // namespace ggml::cpu
