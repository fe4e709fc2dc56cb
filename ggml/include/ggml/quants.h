// Quantized block formats, bit-exact with GGUF/ggml, and their scalar reference routines.
//
// Every format stores a row as a sequence of fixed-size blocks. Weights use one format, activations
// are quantized at run time to the paired format named by TypeTraits::vec_dot_type, and a dot
// product multiplies a weight row by an activation row block by block.
//
// Reference dot products (vec_dot_*_ref) define the numbers every faster kernel must reproduce:
// - F32, F16, BF16: products of the float values summed in order in double, rounded to float once.
// - Block formats: each block's integer sum of quant products is exact (int32); blocks are then
//   added in order into one float accumulator: sum += (dx * dy) * float(isum) [+ offset terms, see
//   each function]. K-quant offsets use the Q8_K block's bsums, which must equal its qs sums.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ggml/types.h"

namespace ggml {

constexpr int QK4_0 = 32;
constexpr int QK4_1 = 32;
constexpr int QK5_0 = 32;
constexpr int QK5_1 = 32;
constexpr int QK8_0 = 32;
constexpr int QK8_1 = 32;
constexpr int QK4_NL = 32;
constexpr int QK_K = 256;         // super-block size of the K-quants
constexpr int K_SCALE_SIZE = 12;  // bytes of packed 6-bit scales in Q3_K/Q4_K/Q5_K

using fp16_t = uint16_t;  // IEEE half, raw bits

// x = d * (q - 8), q in nibbles: qs[j] holds value j (low) and j + 16 (high).
struct BlockQ4_0 {
    fp16_t d;
    uint8_t qs[QK4_0 / 2];
};
// x = d * q + m
struct BlockQ4_1 {
    fp16_t d;
    fp16_t m;
    uint8_t qs[QK4_1 / 2];
};
// x = d * (q - 16); bit j of qh (little endian) is the fifth bit of value j.
struct BlockQ5_0 {
    fp16_t d;
    uint8_t qh[4];
    uint8_t qs[QK5_0 / 2];
};
struct BlockQ5_1 {
    fp16_t d;
    fp16_t m;
    uint8_t qh[4];
    uint8_t qs[QK5_1 / 2];
};
struct BlockQ8_0 {
    fp16_t d;
    int8_t qs[QK8_0];
};
// Activation format paired with Q4_1/Q5_1: s = d * sum(qs), rounded to half.
struct BlockQ8_1 {
    fp16_t d;
    fp16_t s;
    int8_t qs[QK8_1];
};
// 16 sub-blocks of 16: x = d * (scales[j] & 15) * q - dmin * (scales[j] >> 4), q 2 bits.
struct BlockQ2_K {
    uint8_t scales[QK_K / 16];
    uint8_t qs[QK_K / 4];
    fp16_t d;
    fp16_t dmin;
};
// 16 sub-blocks of 16: x = d * (sc - 32) * (q - 4), q = 2 low bits from qs + high bit from hmask,
// sc 6 bits packed in scales (see unpack_q3_k_scales).
struct BlockQ3_K {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[K_SCALE_SIZE];
    fp16_t d;
};
// 8 sub-blocks of 32: x = d * sc * q - dmin * m, 6-bit sc/m packed in scales (see unpack_k4_scales).
struct BlockQ4_K {
    fp16_t d;
    fp16_t dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qs[QK_K / 2];
};
// As Q4_K with a fifth bit per value in qh.
struct BlockQ5_K {
    fp16_t d;
    fp16_t dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
};
// 16 sub-blocks of 16: x = d * scales[j] * (q - 32), q = 4 bits from ql + 2 bits from qh.
struct BlockQ6_K {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    fp16_t d;
};
// Activation format paired with the K-quants; bsums[j] = sum of qs[16j .. 16j+15].
struct BlockQ8_K {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
};
// x = d * kIq4nlValues[q], nibbles arranged as in Q4_0.
struct BlockIQ4_NL {
    fp16_t d;
    uint8_t qs[QK4_NL / 2];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockIQ4_NL) == 18);

// The 16 levels of IQ4_NL (non-linear, denser near zero).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// Packed 6-bit scales of Q4_K/Q5_K: 8 scales and 8 mins in 12 bytes.
void unpack_k4_scales(const uint8_t packed[K_SCALE_SIZE], uint8_t sc[8], uint8_t mn[8]);
void pack_k4_scales(const uint8_t sc[8], const uint8_t mn[8], uint8_t packed[K_SCALE_SIZE]);
// Packed 6-bit scales of Q3_K: 16 values in 12 bytes, returned with the -32 offset applied.
void unpack_q3_k_scales(const uint8_t packed[K_SCALE_SIZE], int8_t sc[16]);
void pack_q3_k_scales(const int8_t sc[16], uint8_t packed[K_SCALE_SIZE]);  // sc in [-32, 31]

// Float rows (n values).
void fp16_to_fp32_row(const void* x, float* y, int64_t n);
void fp32_to_fp16_row(const float* x, void* y, int64_t n);
void bf16_to_fp32_row(const void* x, float* y, int64_t n);
void fp32_to_bf16_row(const float* x, void* y, int64_t n);
void f32_copy_row(const void* x, float* y, int64_t n);
void f32_from_float_row(const float* x, void* y, int64_t n);

// Reference quantizers (the algorithms of ggml's *_ref functions) and dequantizers. n must be a
// multiple of the block size; x must be finite.
void quantize_row_q4_0_ref(const float* x, void* y, int64_t n);
void quantize_row_q4_1_ref(const float* x, void* y, int64_t n);
void quantize_row_q5_0_ref(const float* x, void* y, int64_t n);
void quantize_row_q5_1_ref(const float* x, void* y, int64_t n);
void quantize_row_q8_0_ref(const float* x, void* y, int64_t n);
void quantize_row_q8_1_ref(const float* x, void* y, int64_t n);
void quantize_row_q2_K_ref(const float* x, void* y, int64_t n);
void quantize_row_q3_K_ref(const float* x, void* y, int64_t n);
void quantize_row_q4_K_ref(const float* x, void* y, int64_t n);
void quantize_row_q5_K_ref(const float* x, void* y, int64_t n);
void quantize_row_q6_K_ref(const float* x, void* y, int64_t n);
void quantize_row_q8_K_ref(const float* x, void* y, int64_t n);
// ggml's quantize_row_iq4_nl_ref: least-squares scale for the levels picked at d = max / -127.
void quantize_row_iq4_nl_ref(const float* x, void* y, int64_t n);
// What llama-quantize writes for IQ4_NL: also tries 15 scales around the start, then re-picks levels.
void quantize_row_iq4_nl_search(const float* x, void* y, int64_t n);

void dequantize_row_q4_0(const void* x, float* y, int64_t n);
void dequantize_row_q4_1(const void* x, float* y, int64_t n);
void dequantize_row_q5_0(const void* x, float* y, int64_t n);
void dequantize_row_q5_1(const void* x, float* y, int64_t n);
void dequantize_row_q8_0(const void* x, float* y, int64_t n);
void dequantize_row_q8_1(const void* x, float* y, int64_t n);
void dequantize_row_q2_K(const void* x, float* y, int64_t n);
void dequantize_row_q3_K(const void* x, float* y, int64_t n);
void dequantize_row_q4_K(const void* x, float* y, int64_t n);
void dequantize_row_q5_K(const void* x, float* y, int64_t n);
void dequantize_row_q6_K(const void* x, float* y, int64_t n);
void dequantize_row_q8_K(const void* x, float* y, int64_t n);
void dequantize_row_iq4_nl(const void* x, float* y, int64_t n);

// Reference dot products: s = dot(x, y), x the weight row, y the paired activation row.
void vec_dot_f32_ref(int64_t n, float* s, const void* x, const void* y);
void vec_dot_f16_ref(int64_t n, float* s, const void* x, const void* y);
void vec_dot_bf16_ref(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q4_0_q8_0_ref(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q4_1_q8_1_ref(int64_t n, float* s, const void* x, const void* y);  // + m * s per block
void vec_dot_q5_0_q8_0_ref(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q5_1_q8_1_ref(int64_t n, float* s, const void* x, const void* y);  // + m * s per block
void vec_dot_q8_0_q8_0_ref(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q2_K_q8_K_ref(int64_t n, float* s, const void* x, const void* y);  // - dmin * dy * mins
void vec_dot_q3_K_q8_K_ref(int64_t n, float* s, const void* x, const void* y);
void vec_dot_q4_K_q8_K_ref(int64_t n, float* s, const void* x, const void* y);  // - dmin * dy * mins
void vec_dot_q5_K_q8_K_ref(int64_t n, float* s, const void* x, const void* y);  // - dmin * dy * mins
void vec_dot_q6_K_q8_K_ref(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq4_nl_q8_0_ref(int64_t n, float* s, const void* x, const void* y);

// Quantizes nrows rows of n_per_row values into type t as a GGUF writer does (llama-quantize without
// an importance matrix); returns the bytes written. Throws std::invalid_argument if t has no
// quantizer or n_per_row is not a multiple of its block size.
size_t quantize_rows(Type t, const float* src, void* dst, int64_t nrows, int64_t n_per_row);

}  // namespace ggml
