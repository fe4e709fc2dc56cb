// Dot products of one weight row and one activation row for the block formats, bit-identical to the
// reference: exact integer block sums, then the reference's float steps in its order. Templates over a
// byte-product policy (Dot) that each level supplies:
//   Dot::dot32<kOffset>(u, y): 8 int32 lanes summing to sum((u - kOffset) * y) over 32 bytes, each lane
//                               covering 4 consecutive bytes;
//   Dot::madd_acc(acc, p, s):  acc + _mm256_madd_epi16(p, s).
// Include inside a target region (see kernels_x86_vec.h).
#pragma once

#include "kernels_x86_decode.h"

namespace ggml::cpu {
namespace {

// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4: 8 blocks per step, their float terms computed side by side,
// then added to the sum one by one in block order.
template <class Dot, class D>
void vec_dot_blocks32(int64_t n, float* s, const void* vx, const void* vy) {
    using Block = typename D::Block;
    using Act = typename D::Act;
    const auto* x = static_cast<const Block*>(vx);
    const auto* y = static_cast<const Act*>(vy);
    const int64_t nb = n / 32;
    float sum = 0;
    for (int64_t i = 0; i < nb; i += 8) {
        const int count = nb - i < 8 ? int(nb - i) : 8;
        __m256i p[8];
        for (int b = 0; b < 8; ++b)
            p[b] = b < count ? Dot::template dot32<D::kOffset>(D::quants(BlockBytes(x[i + b])),
                                                               load256(y[i + b].qs))
                             : _mm256_setzero_si256();
        const __m256 isum = _mm256_cvtepi32_ps(reduce8_i32(p));
        const __m256 dx = block_scales8<D>(&x[i], count);
        const __m256 dy = halves8(&y[i].d, sizeof(Act), count);
        __m256 t = _mm256_mul_ps(_mm256_mul_ps(dx, dy), isum);
        if constexpr (D::kHasMin) {
            const __m256 m = halves8(&x[i].m, sizeof(Block), count);
            t = _mm256_add_ps(t, _mm256_mul_ps(m, halves8(&y[i].s, sizeof(Act), count)));
        }
        alignas(32) float terms[8];
        _mm256_store_ps(terms, t);
        for (int b = 0; b < count; ++b) sum += terms[b];
    }
    *s = sum;
}

// Q2_K ... Q6_K: per super-block, scaled 16-value sums accumulated in 8 int32 lanes, reduced exactly.
template <class Dot, class D>
void vec_dot_superblocks(int64_t n, float* s, const void* vx, const void* vy) {
    using Block = typename D::Block;
    const auto* x = static_cast<const Block*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        __m256i scales, cor;
        D::scales(x[i], &scales, &cor);
        alignas(32) int16_t sc[16];
        _mm256_store_si256(reinterpret_cast<__m256i*>(sc), scales);
        const BlockBytes src(x[i]);
        __m256i acc = _mm256_setzero_si256();
        for (int k = 0; k < 8; ++k) {
            // Lanes 0-3 cover values of group 2k, lanes 4-7 group 2k + 1.
            const __m256i scale = _mm256_set_m128i(_mm_set1_epi16(sc[2 * k + 1]), _mm_set1_epi16(sc[2 * k]));
            const __m256i p = _mm256_maddubs_epi16(D::quants(src, k), load256(y[i].qs + 32 * k));
            acc = Dot::madd_acc(acc, p, scale);
        }
        const __m256i corr = _mm256_madd_epi16(cor, load256(y[i].bsums));
        const float dx = half_to_float(x[i].d);
        if constexpr (D::kHasMins) {
            const float dmin = half_to_float(x[i].dmin);
            sum += (y[i].d * dx) * float(hsum_i32(acc)) - (y[i].d * dmin) * float(hsum_i32(corr));
        } else {
            sum += (y[i].d * dx) * float(hsum_i32(_mm256_add_epi32(acc, corr)));
        }
    }
    *s = sum;
}

}  // namespace
}  // namespace ggml::cpu
