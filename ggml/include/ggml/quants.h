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
#include <cstring>

#include "ggml/types.h"

namespace ggml {

constexpr int QK4_0 = 32;
constexpr int QK4_1 = 32;
constexpr int QK5_0 = 32;
constexpr int QK5_1 = 32;
constexpr int QK8_0 = 32;
constexpr int QK8_1 = 32;
constexpr int QK4_NL = 32;
constexpr int QK_MXFP4 = 32;
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

// The IQ formats (iq_grids.h has their grids): super-blocks of 256 in 8 groups of 32 (IQ4_XS: 8 groups
// with 6-bit scales, x = d * (sc - 32) * kIq4nlValues[q], nibbles of group g in qs[16g ..]).
struct BlockIQ4_XS {
    fp16_t d;
    uint16_t scales_h;              // 2 high bits of the 8 scales
    uint8_t scales_l[QK_K / 64];    // 4 low bits, group 2k in the low nibble of byte k
    uint8_t qs[QK_K / 2];
};
// Group g is the 8 bytes of qs[4g .. 4g + 3]: 4 byte indices into kIq2xxsGrid (8 values each), then a
// little-endian uint32 of four 7-bit sign groups (iq::signs_of) and a 4-bit scale s in bits 28-31:
// x = d * (0.5 + s) * 0.25 * grid * sign.
struct BlockIQ2_XXS {
    fp16_t d;
    uint16_t qs[QK_K / 8];
};
// qs[4g + l]: 9-bit index into kIq2xsGrid, 7 sign bits above it; scales[g]: two 4-bit scales (values
// 0-15 of the group low nibble, 16-31 high): x = d * (0.5 + s) * 0.25 * grid * sign.
struct BlockIQ2_XS {
    fp16_t d;
    uint16_t qs[QK_K / 8];
    uint8_t scales[QK_K / 32];
};
// qs[0..31]: low 8 bits of the 10-bit kIq2sGrid indices (4 per group), qs[32..63]: 8 explicit sign bits
// per 8 values, qh[g]: the top 2 bits of group g's 4 indices; scales as in IQ2_XS.
struct BlockIQ2_S {
    fp16_t d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t scales[QK_K / 32];
};
// qs[0..63]: kIq3xxsGrid indices (4 values each, 8 per group); then per group a uint32 of four 7-bit
// sign groups and a 4-bit scale s: x = d * (0.5 + s) * 0.5 * grid * sign.
struct BlockIQ3_XXS {
    fp16_t d;
    uint8_t qs[3 * QK_K / 8];
};
// 9-bit kIq3sGrid indices: low 8 bits in qs, bit 8 of index 8g + k in bit k of qh[g]; 8 explicit sign
// bits per 8 values; scales[k]: 4-bit scales of groups 2k (low) and 2k + 1: x = d * (1 + 2 s) * grid * sign.
struct BlockIQ3_S {
    fp16_t d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t signs[QK_K / 8];
    uint8_t scales[QK_K / 64];
};
// 11-bit kIq1sGrid indices: low 8 bits in qs, high 3 bits of index 4g + l in bits 3l.. of qh[g]; qh[g] bits
// 12-14: scale s, bit 15: sign of the shift: x = d * (2 s + 1) * (grid +- kIq1Delta).
struct BlockIQ1_S {
    fp16_t d;
    uint8_t qs[QK_K / 8];
    uint16_t qh[QK_K / 32];
};
// As IQ1_S with two 3-bit scales per group and a shift sign per 8 values; qh[2g + h] holds the high index
// bits of indices 4g + 2h (bits 0-2) and 4g + 2h + 1 (bits 4-6), their shift signs in bits 3 and 7. The
// half d is spread over the top nibbles of the four uint16 of scales.
struct BlockIQ1_M {
    uint8_t qs[QK_K / 8];
    uint8_t qh[QK_K / 16];
    uint8_t scales[QK_K / 32];
};
// Ternary: values d * (t - 1), t in {0, 1, 2}. qs: 5 trits per byte as a fraction of 243 (byte j of the
// first 32 holds values j, j + 32, ..., j + 128 of the first 160; the next 16 bytes values 160 + ...),
// qh: 4 trits per byte for the last 16 values.
struct BlockTQ1_0 {
    uint8_t qs[(QK_K - 4 * QK_K / 64) / 5];
    uint8_t qh[QK_K / 64];
    fp16_t d;
};
// Ternary: 2 bits per value, value 128c + 32l + m in bits 2l of qs[32c + m]; x = d * (q - 1).
struct BlockTQ2_0 {
    uint8_t qs[QK_K / 4];
    fp16_t d;
};
// MXFP4: 32 E2M1 values with a shared power-of-two scale e (E8M0), nibbles as in Q4_0:
// x = 2^(e - 128) * kMxfp4Values[q] (the table holds the E2M1 values doubled).
struct BlockMXFP4 {
    uint8_t e;
    uint8_t qs[QK_MXFP4 / 2];
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
static_assert(sizeof(BlockIQ4_XS) == 136);
static_assert(sizeof(BlockIQ2_XXS) == 66);
static_assert(sizeof(BlockIQ2_XS) == 74);
static_assert(sizeof(BlockIQ2_S) == 82);
static_assert(sizeof(BlockIQ3_XXS) == 98);
static_assert(sizeof(BlockIQ3_S) == 110);
static_assert(sizeof(BlockIQ1_S) == 50);
static_assert(sizeof(BlockIQ1_M) == 56);
static_assert(sizeof(BlockTQ1_0) == 54);
static_assert(sizeof(BlockTQ2_0) == 66);
static_assert(sizeof(BlockMXFP4) == 17);

// The shift of the IQ1 values: grid values -1, 0, 1 move by +-1/8.
inline constexpr float kIq1Delta = 0.125f;

// The half scale of an MXFP4 block: 2^(e - 128) = 2^(e - 127) / 2 (exact for every e; e < 2 subnormal).
inline float mxfp4_half_scale(uint8_t e) {
    const uint32_t bits = e < 2 ? 0x00200000u << e : uint32_t(e - 1) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

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
// ggml's quantize_row_iq4_xs_ref (what llama-quantize writes without an importance matrix): per group
// of 32 the IQ4_NL 15-scale search, group scales stored as 6-bit multiples of one half scale.
void quantize_row_iq4_xs_ref(const float* x, void* y, int64_t n);
// ggml's quantize_row_iq3_xxs_ref / quantize_row_iq3_s_ref (iq3_quantize.cpp): grid search without
// importance weights (w = x^2), as llama-quantize writes them without an importance matrix.
void quantize_row_iq3_xxs_ref(const float* x, void* y, int64_t n);
void quantize_row_iq3_s_ref(const float* x, void* y, int64_t n);
void quantize_row_tq1_0_ref(const float* x, void* y, int64_t n);
void quantize_row_tq2_0_ref(const float* x, void* y, int64_t n);
// Scale 2^(floor(log2(max |x|)) - 2), values rounded to the nearest E2M1 value (first of ties).
void quantize_row_mxfp4_ref(const float* x, void* y, int64_t n);

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
void dequantize_row_iq4_xs(const void* x, float* y, int64_t n);
void dequantize_row_iq2_xxs(const void* x, float* y, int64_t n);
void dequantize_row_iq2_xs(const void* x, float* y, int64_t n);
void dequantize_row_iq2_s(const void* x, float* y, int64_t n);
void dequantize_row_iq3_xxs(const void* x, float* y, int64_t n);
void dequantize_row_iq3_s(const void* x, float* y, int64_t n);
void dequantize_row_iq1_s(const void* x, float* y, int64_t n);
void dequantize_row_iq1_m(const void* x, float* y, int64_t n);
void dequantize_row_tq1_0(const void* x, float* y, int64_t n);
void dequantize_row_tq2_0(const void* x, float* y, int64_t n);
void dequantize_row_mxfp4(const void* x, float* y, int64_t n);

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
// The IQ, TQ and MXFP4 formats: one float term per super-block (per block for MXFP4) formed from exact
// integer sums, added in order (docs/quantization.md gives each term):
void vec_dot_iq4_xs_q8_K_ref(int64_t n, float* s, const void* x, const void* y);   // (dx dy) isum
void vec_dot_iq2_xxs_q8_K_ref(int64_t n, float* s, const void* x, const void* y);  // (dx dy) isum / 8
void vec_dot_iq2_xs_q8_K_ref(int64_t n, float* s, const void* x, const void* y);   // (dx dy) isum / 8
void vec_dot_iq2_s_q8_K_ref(int64_t n, float* s, const void* x, const void* y);    // (dx dy) isum / 8
void vec_dot_iq3_xxs_q8_K_ref(int64_t n, float* s, const void* x, const void* y);  // (dx dy) isum / 4
void vec_dot_iq3_s_q8_K_ref(int64_t n, float* s, const void* x, const void* y);    // (dx dy) isum
// IQ1: (dx dy) (isum + ishift / 8); IQ1_S takes the shift sums from the Q8_K bsums.
void vec_dot_iq1_s_q8_K_ref(int64_t n, float* s, const void* x, const void* y);
void vec_dot_iq1_m_q8_K_ref(int64_t n, float* s, const void* x, const void* y);
void vec_dot_tq1_0_q8_K_ref(int64_t n, float* s, const void* x, const void* y);    // (dx dy) isum
void vec_dot_tq2_0_q8_K_ref(int64_t n, float* s, const void* x, const void* y);    // (dx dy) isum
void vec_dot_mxfp4_q8_0_ref(int64_t n, float* s, const void* x, const void* y);    // (dy 2^(e-128)) isum

// Quantizes nrows rows of n_per_row values into type t as a GGUF writer does (llama-quantize without
// an importance matrix); returns the bytes written. Throws std::invalid_argument if t has no
// quantizer or n_per_row is not a multiple of its block size.
size_t quantize_rows(Type t, const float* src, void* dst, int64_t nrows, int64_t n_per_row);

}  // namespace ggml
