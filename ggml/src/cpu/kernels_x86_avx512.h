// 512-bit helpers for the AVX-512 kernels. Include inside an AVX-512 target region (see
// kernels_x86_vec.h for the rules).
#pragma once

#include "kernels_x86_vec.h"

namespace ggml::cpu {
namespace {

// One core's demand loads alone do not keep enough lines in flight to stream weights at the memory's
// rate (one-column decode read about 22 GB/s of a model's weights on one Zen 4 core, 30-40 % below what
// the same loop reaches with prefetches): each piece of a row asks for the lines kPrefetchAhead bytes
// further on, within the rows of the call. 6 KiB was the best of 3-12 KiB on TinyLlama-shaped q4_0, q8_0,
// q4_K and a gpt-oss-shaped MXFP4 model, at 1 and 2 threads (docs/performance.md).
constexpr int64_t kPrefetchAhead = 6144;

inline void prefetch_ahead(const uint8_t* p, int64_t bytes, const uint8_t* end) {
    const int64_t room = (end - p) - kPrefetchAhead, n = bytes < room ? bytes : room;
    for (int64_t l = 0; l < n; l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchAhead + l), _MM_HINT_T0);
}

// sum + (dx * dy) * isum in the reference's float steps: one super-block's term added to a row's sum.
inline float add_block_term(float sum, float dx, float dy, int32_t isum) {
    return _mm_cvtss_f32(
        _mm_add_ss(_mm_set_ss(sum), _mm_mul_ss(_mm_mul_ss(_mm_set_ss(dx), _mm_set_ss(dy)), _mm_set_ss(float(isum)))));
}

// 16 x 8 transpose of 32-bit elements: out[j] lane r = in[r] lane j (rows in order).
inline void transpose16x8_i32(const __m256i in[16], __m512i out[8]) {
    __m512i z[8], t[8], u[8];
    // z[r] = rows r and r + 8; the 4x4 transposes below work within 128-bit lanes.
    for (int r = 0; r < 8; ++r) z[r] = _mm512_inserti64x4(_mm512_castsi256_si512(in[r]), in[r + 8], 1);
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm512_unpacklo_epi32(z[k], z[k + 1]);
        t[k + 1] = _mm512_unpackhi_epi32(z[k], z[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        u[k] = _mm512_unpacklo_epi64(t[k], t[k + 2]);
        u[k + 1] = _mm512_unpackhi_epi64(t[k], t[k + 2]);
        u[k + 2] = _mm512_unpacklo_epi64(t[k + 1], t[k + 3]);
        u[k + 3] = _mm512_unpackhi_epi64(t[k + 1], t[k + 3]);
    }
    // u[d], 128-bit lanes: element d of rows 0-3, element d + 4 of rows 0-3, element d of rows 8-11,
    // element d + 4 of rows 8-11; u[4 + d] the same for rows 4-7 and 12-15.
    const __m512i low = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const __m512i high = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    for (int d = 0; d < 4; ++d) {
        out[d] = _mm512_permutex2var_epi64(u[d], low, u[4 + d]);
        out[d + 4] = _mm512_permutex2var_epi64(u[d], high, u[4 + d]);
    }
}

// 16 halves as floats (element inserts: a store-and-reload would stall).
inline __m512 halves16(const uint16_t h[16]) {
    const __m128i lo = _mm_setr_epi16(short(h[0]), short(h[1]), short(h[2]), short(h[3]), short(h[4]),
                                      short(h[5]), short(h[6]), short(h[7]));
    const __m128i hi = _mm_setr_epi16(short(h[8]), short(h[9]), short(h[10]), short(h[11]), short(h[12]),
                                      short(h[13]), short(h[14]), short(h[15]));
    return _mm512_cvtph_ps(_mm256_set_m128i(hi, lo));
}

// Sum of the 16 lanes in a fixed order.
inline float hsum512(__m512 v) {
    const __m512 swapped = _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2));
    const __m256 a = _mm512_castps512_ps256(_mm512_add_ps(v, swapped));
    __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    b = _mm_add_ps(b, _mm_movehl_ps(b, b));
    b = _mm_add_ss(b, _mm_movehdup_ps(b));
    return _mm_cvtss_f32(b);
}

// hsum512 of sixteen vectors at once, with the same additions: out lane 4c + r = hsum512(v[4r + c]) (a
// 4 x 4 tile's outputs, column c's four rows in lanes 4c .. 4c + 3). Each step pairs the lanes hsum512
// pairs, for four, eight or sixteen vectors in one instruction, instead of reducing each vector alone.
inline __m512 hsum512_4x4(const __m512 v[16]) {
    __m512 t[8], u[4], w[2];
    for (int k = 0; k < 8; ++k)  // quarters q0 + q2 and q1 + q3 of v[2k] and v[2k + 1]
        t[k] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    for (int m = 0; m < 4; ++m)  // quarter j of u[m]: the four partial sums of v[4m + j]
        u[m] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * m], t[2 * m + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(t[2 * m], t[2 * m + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    for (int h = 0; h < 2; ++h)  // lanes 0 + 2 and 1 + 3 of each
        w[h] = _mm512_add_ps(_mm512_shuffle_ps(u[2 * h], u[2 * h + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(u[2 * h], u[2 * h + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    // Quarter j: v[j], v[4 + j], v[8 + j], v[12 + j].
    return _mm512_add_ps(_mm512_shuffle_ps(w[0], w[1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_ps(w[0], w[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

}  // namespace
}  // namespace ggml::cpu
