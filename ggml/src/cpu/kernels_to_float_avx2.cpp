// Dequantization of rows at the AVX2 level (get_rows, cache reads): exactly the values of the reference
// dequantizers, computed with the same float operations per value.
#include "kernels_x86_intrin.h"

#include <cstdint>
#include <cstring>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"
#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX2_BEGIN
#include "kernels_x86_decode.h"

namespace ggml::cpu {
namespace {

// Bytes 8k .. 8k+7 of u minus offset, as floats.
inline __m256 level8(__m256i u, int k, int offset) {
    const __m128i half = k < 2 ? _mm256_castsi256_si128(u) : _mm256_extracti128_si256(u, 1);
    const __m128i bytes = (k & 1) ? _mm_unpackhi_epi64(half, half) : half;
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepu8_epi32(bytes), _mm256_set1_epi32(offset)));
}

template <class D>
void to_float_blocks32(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const typename D::Block*>(vx);
    for (int64_t i = 0; i < n / 32; ++i, y += 32) {
        const __m256i u = D::quants(BlockBytes(x[i]));
        const __m256 d = _mm256_set1_ps(half_to_float(x[i].d));
        for (int k = 0; k < 4; ++k) {
            __m256 v = _mm256_mul_ps(level8(u, k, D::kOffset), d);  // float(q - offset) * d [+ m]
            if constexpr (D::kHasMin) v = _mm256_add_ps(v, _mm256_set1_ps(half_to_float(x[i].m)));
            _mm256_storeu_ps(y + 8 * k, v);
        }
    }
}

template <class D>
void to_float_superblocks(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const typename D::Block*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i) {
        __m256i scales, mins;
        D::scales(x[i], &scales, &mins);
        alignas(32) int16_t sc[16], cor[16];
        _mm256_store_si256(reinterpret_cast<__m256i*>(sc), scales);
        _mm256_store_si256(reinterpret_cast<__m256i*>(cor), mins);
        const BlockBytes src(x[i]);
        const float d = half_to_float(x[i].d);
        float dmin = 0;
        if constexpr (D::kHasMins) dmin = half_to_float(x[i].dmin);
        for (int k = 0; k < 8; ++k, y += 32) {
            const __m256i u = D::quants(src, k);
            for (int h = 0; h < 4; ++h) {
                const int g = 2 * k + h / 2;
                // dl * float(q - offset) [- ml], dl = d * sc and ml = dmin * min as in the reference.
                const __m256 dl = _mm256_set1_ps(d * float(sc[g]));
                __m256 v = _mm256_mul_ps(dl, level8(u, h, D::kLevelOffset));
                if constexpr (D::kHasMins) v = _mm256_sub_ps(v, _mm256_set1_ps(dmin * float(cor[g])));
                _mm256_storeu_ps(y + 8 * h, v);
            }
        }
    }
}

}  // namespace

namespace avx2 {

void to_float_f16(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const uint16_t*>(vx);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 f = _mm256_cvtph_ps(load128(x + i));
        _mm256_storeu_ps(y + i, f);
        // F16C quiets signalling NaNs; the reference keeps them as they are.
        if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)))
            for (int k = 0; k < 8; ++k) y[i + k] = fp16_to_fp32(x[i + k]);
    }
    for (; i < n; ++i) y[i] = fp16_to_fp32(x[i]);
}

void to_float_bf16(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const uint16_t*>(vx);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                            _mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(x + i)), 16));
    for (; i < n; ++i) y[i] = bf16_to_fp32(x[i]);
}

void f16_to_f32_row(const uint16_t* x, float* y, int64_t n) {
    to_float_f16(x, y, n);
}

void to_float_q4_0(const void* x, float* y, int64_t n) {
    to_float_blocks32<DecodeQ4_0>(x, y, n);
}
void to_float_q4_1(const void* x, float* y, int64_t n) {
    to_float_blocks32<DecodeQ4_1>(x, y, n);
}
void to_float_q5_0(const void* x, float* y, int64_t n) {
    to_float_blocks32<DecodeQ5_0>(x, y, n);
}
void to_float_q5_1(const void* x, float* y, int64_t n) {
    to_float_blocks32<DecodeQ5_1>(x, y, n);
}
void to_float_q8_0(const void* x, float* y, int64_t n) {
    to_float_blocks32<DecodeQ8_0>(x, y, n);
}
void to_float_iq4_nl(const void* x, float* y, int64_t n) {
    to_float_blocks32<DecodeIQ4_NL>(x, y, n);
}
void to_float_q2_K(const void* x, float* y, int64_t n) {
    to_float_superblocks<DecodeQ2_K>(x, y, n);
}
void to_float_q3_K(const void* x, float* y, int64_t n) {
    to_float_superblocks<DecodeQ3_K>(x, y, n);
}
void to_float_q4_K(const void* x, float* y, int64_t n) {
    to_float_superblocks<DecodeQ4_K>(x, y, n);
}
void to_float_q5_K(const void* x, float* y, int64_t n) {
    to_float_superblocks<DecodeQ5_K>(x, y, n);
}
void to_float_q6_K(const void* x, float* y, int64_t n) {
    to_float_superblocks<DecodeQ6_K>(x, y, n);
}

}  // namespace avx2
}  // namespace ggml::cpu
GGML_TARGET_END
#endif
