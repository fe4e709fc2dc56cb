// 256-bit helpers shared by the AVX2 and AVX-512 kernels. Include inside a target region (see
// kernels_simd_target.h) after <immintrin.h>, <cstdint> and <cstring>; everything here has internal
// linkage, so each level's translation unit keeps its own copy compiled for its own target.
#pragma once

namespace ggml::cpu {
namespace {

inline __m256i load256(const void* p) {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
inline __m128i load128(const void* p) {
    return _mm_loadu_si128(static_cast<const __m128i*>(p));
}

inline int32_t load_i32(const void* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// IEEE half to float, exact (F16C; a signalling NaN comes back quiet).
inline float half_to_float(uint16_t h) {
    return _cvtsh_ss(h);
}

// Sum of the 8 int32 lanes (exact).
inline int32_t hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

// Lane b of the result is the sum of the 8 lanes of p[b] (exact).
inline __m256i reduce8_i32(const __m256i p[8]) {
    const __m256i h01 = _mm256_hadd_epi32(p[0], p[1]);
    const __m256i h23 = _mm256_hadd_epi32(p[2], p[3]);
    const __m256i h45 = _mm256_hadd_epi32(p[4], p[5]);
    const __m256i h67 = _mm256_hadd_epi32(p[6], p[7]);
    // Per 128-bit half: [p0 p1 p2 p3] sums of lanes 0-3 (low half) and of lanes 4-7 (high half).
    const __m256i g0 = _mm256_hadd_epi32(h01, h23);
    const __m256i g1 = _mm256_hadd_epi32(h45, h67);
    return _mm256_add_epi32(_mm256_permute2x128_si256(g0, g1, 0x20), _mm256_permute2x128_si256(g0, g1, 0x31));
}

// The halves at p + k * stride bytes for k < count (zero for count <= k < 8), as floats. Built with
// element inserts: a gather or a store-and-reload is slower here.
inline __m256 halves8(const void* p, size_t stride, int count) {
    const auto* b = static_cast<const uint8_t*>(p);
    uint16_t h[8];
    for (int k = 0; k < 8; ++k) {
        h[k] = 0;
        if (k < count) std::memcpy(&h[k], b + size_t(k) * stride, 2);
    }
    return _mm256_cvtph_ps(_mm_setr_epi16(short(h[0]), short(h[1]), short(h[2]), short(h[3]), short(h[4]),
                                          short(h[5]), short(h[6]), short(h[7])));
}

// 8 halves as floats (element inserts: a store-and-reload would stall).
inline __m256 halves8(const uint16_t h[8]) {
    return _mm256_cvtph_ps(_mm_setr_epi16(short(h[0]), short(h[1]), short(h[2]), short(h[3]), short(h[4]),
                                          short(h[5]), short(h[6]), short(h[7])));
}

// 8x8 transpose of 32-bit elements: out[j] lane r = in[r] lane j.
inline void transpose8x8_i32(const __m256i in[8], __m256i out[8]) {
    __m256i t[8], u[8];
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_epi32(in[k], in[k + 1]);
        t[k + 1] = _mm256_unpackhi_epi32(in[k], in[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        u[k] = _mm256_unpacklo_epi64(t[k], t[k + 2]);
        u[k + 1] = _mm256_unpackhi_epi64(t[k], t[k + 2]);
        u[k + 2] = _mm256_unpacklo_epi64(t[k + 1], t[k + 3]);
        u[k + 3] = _mm256_unpackhi_epi64(t[k + 1], t[k + 3]);
    }
    // u[d] holds element d (low half) and d + 4 (high half) of rows 0-3; u[4 + d] of rows 4-7.
    for (int d = 0; d < 4; ++d) {
        out[d] = _mm256_permute2x128_si256(u[d], u[4 + d], 0x20);
        out[d + 4] = _mm256_permute2x128_si256(u[d], u[4 + d], 0x31);
    }
}

}  // namespace
}  // namespace ggml::cpu
