// Activation quantizers at the AVX-512 level. Each produces exactly the bytes of its reference
// (quantize_row_*_ref, fp32_to_fp16_row, fp32_to_bf16_row): the same float operations per value,
// vectorized, with blocks whose scale overflows handed to the reference.
#include "kernels_x86_intrin.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ggml/quants.h"
#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX512_BEGIN
#include "kernels_x86_avx512.h"

namespace ggml::cpu {
namespace {

inline __m512 abs_ps(__m512 v) {
    return _mm512_abs_ps(v);
}

inline float hmax(__m512 v) {
    const __m256 a =
        _mm512_castps512_ps256(_mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2))));
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

inline int32_t hsum_i32x16(__m512i v) {
    const __m512i s = _mm512_add_epi32(v, _mm512_shuffle_i32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    return hsum_i32(_mm512_castsi512_si256(s));
}

// std::round (half away from zero), exact: v - trunc(v) is exact for every float.
inline __m512 round_away(__m512 v) {
    const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask16 up = _mm512_cmp_ps_mask(abs_ps(_mm512_sub_ps(v, t)), _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    const __m512 one = _mm512_or_ps(_mm512_and_ps(v, _mm512_set1_ps(-0.0f)), _mm512_set1_ps(1.0f));
    return _mm512_mask_add_ps(t, up, t, one);
}

// One Q8_0/Q8_1 block: the quants and their sum; false if the reference must handle it.
inline bool quantize_q8_block(const float* x, int8_t* qs, uint16_t* d16, int32_t* sum, float* d_out) {
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    const float d = hmax(_mm512_max_ps(abs_ps(v0), abs_ps(v1))) / 127;
    const float id = d ? 1.0f / d : 0.0f;
    if (!(id <= FLT_MAX)) return false;
    const __m512 vid = _mm512_set1_ps(id), lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
    const __m512i q0 =
        _mm512_cvttps_epi32(_mm512_min_ps(_mm512_max_ps(round_away(_mm512_mul_ps(v0, vid)), lo), hi));
    const __m512i q1 =
        _mm512_cvttps_epi32(_mm512_min_ps(_mm512_max_ps(round_away(_mm512_mul_ps(v1, vid)), lo), hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), _mm512_cvtepi32_epi8(q1));
    *d16 = fp32_to_fp16(d);
    *sum = hsum_i32x16(_mm512_add_epi32(q0, q1));
    *d_out = d;
    return true;
}

}  // namespace

namespace avx512 {

void quantize_q8_0(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ8_0*>(vy);
    for (int64_t i = 0; i < n / QK8_0; ++i, x += QK8_0) {
        int32_t sum;
        float d;
        if (!quantize_q8_block(x, y[i].qs, &y[i].d, &sum, &d)) quantize_row_q8_0_ref(x, &y[i], QK8_0);
    }
}

void quantize_q8_1(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ8_1*>(vy);
    for (int64_t i = 0; i < n / QK8_1; ++i, x += QK8_1) {
        int32_t sum;
        float d;
        if (quantize_q8_block(x, y[i].qs, &y[i].d, &sum, &d))
            y[i].s = fp32_to_fp16(float(sum) * d);
        else
            quantize_row_q8_1_ref(x, &y[i], QK8_1);
    }
}

void quantize_q8_K(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<BlockQ8_K*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
        __m512 amax_v = _mm512_setzero_ps();
        for (int k = 0; k < QK_K; k += 16) amax_v = _mm512_max_ps(amax_v, abs_ps(_mm512_loadu_ps(x + k)));
        const float amax = hmax(amax_v);
        if (!amax) {
            std::memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        // The first value of largest magnitude sets the sign of the scale.
        int first = 0;
        for (int k = 0; k < QK_K; k += 16) {
            const __mmask16 hit =
                _mm512_cmp_ps_mask(abs_ps(_mm512_loadu_ps(x + k)), _mm512_set1_ps(amax), _CMP_EQ_OQ);
            if (hit) {
                first = k + __builtin_ctz(unsigned(hit));
                break;
            }
        }
        const float iscale = -127.f / x[first];
        if (!(std::fabs(iscale) <= FLT_MAX)) {
            quantize_row_q8_K_ref(x, &y[i], QK_K);
            continue;
        }
        const __m512 vs = _mm512_set1_ps(iscale);
        const __m512i lim = _mm512_set1_epi32(127);
        for (int g = 0; g < QK_K; g += 16) {
            const __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(vs, _mm512_loadu_ps(x + g)),
                                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            const __m512i q = _mm512_min_epi32(_mm512_cvttps_epi32(r), lim);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs + g), _mm512_cvtepi32_epi8(q));
            y[i].bsums[g / 16] = int16_t(hsum_i32x16(q));
        }
        y[i].d = 1 / iscale;
    }
}

void quantize_f16(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<uint16_t*>(vy);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

void quantize_bf16(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<uint16_t*>(vy);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i u = _mm512_loadu_si512(x + i);
        // Round to nearest even: add 0x7fff plus the lowest kept bit; NaN keeps its top bits, made quiet.
        const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
        const __m512i rounded =
            _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
        const __m512i nan = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
        const __mmask16 is_nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                         _mm512_set1_epi32(0x7f800000));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                            _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(is_nan, rounded, nan)));
    }
    for (; i < n; ++i) y[i] = fp32_to_bf16(x[i]);
}

}  // namespace avx512
}  // namespace ggml::cpu
GGML_TARGET_END
#endif
