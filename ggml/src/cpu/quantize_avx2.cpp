// Activation quantizers at the AVX2 level. Each produces exactly the bytes of its reference
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
GGML_TARGET_AVX2_BEGIN
#include "kernels_x86_vec.h"

namespace ggml::cpu {
namespace {

inline __m256 abs_ps(__m256 v) {
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}

inline float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

// std::round (half away from zero), exact: v - trunc(v) is exact for every float.
inline __m256 round_away(__m256 v) {
    const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 frac = abs_ps(_mm256_sub_ps(v, t));
    const __m256 one = _mm256_or_ps(_mm256_and_ps(v, _mm256_set1_ps(-0.0f)), _mm256_set1_ps(1.0f));
    return _mm256_add_ps(t, _mm256_and_ps(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ), one));
}

// 32 int32 in four vectors -> 32 int8 in order (values already in range).
inline __m256i pack_i8(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
    return _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// One Q8_0/Q8_1 block: the quants and their sum; false if the reference must handle it.
inline bool quantize_q8_block(const float* x, int8_t* qs, uint16_t* d16, int32_t* sum, float* d_out) {
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
        v[k] = _mm256_loadu_ps(x + 8 * k);
        amax = _mm256_max_ps(amax, abs_ps(v[k]));
    }
    const float d = hmax(amax) / 127;
    const float id = d ? 1.0f / d : 0.0f;
    if (!(id <= FLT_MAX)) return false;
    const __m256 vid = _mm256_set1_ps(id), lim = _mm256_set1_ps(127.0f);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
        const __m256 r = round_away(_mm256_mul_ps(v[k], vid));
        q[k] = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(-127.0f)), lim));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), pack_i8(q[0], q[1], q[2], q[3]));
    *d16 = fp32_to_fp16(d);
    *sum = hsum_i32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
    *d_out = d;
    return true;
}

}  // namespace

namespace avx2 {

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
        __m256 amax_v = _mm256_setzero_ps();
        for (int k = 0; k < QK_K; k += 8) amax_v = _mm256_max_ps(amax_v, abs_ps(_mm256_loadu_ps(x + k)));
        const float amax = hmax(amax_v);
        if (!amax) {
            std::memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        // The first value of largest magnitude sets the sign of the scale.
        int first = 0;
        for (int k = 0; k < QK_K; k += 8) {
            const int hit = _mm256_movemask_ps(
                _mm256_cmp_ps(abs_ps(_mm256_loadu_ps(x + k)), _mm256_set1_ps(amax), _CMP_EQ_OQ));
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
        const __m256 vs = _mm256_set1_ps(iscale);
        const __m256i lim = _mm256_set1_epi32(127);
        for (int g = 0; g < QK_K; g += 32) {
            __m256i q[4];
            for (int k = 0; k < 4; ++k) {
                const __m256 r = _mm256_round_ps(_mm256_mul_ps(vs, _mm256_loadu_ps(x + g + 8 * k)),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                q[k] = _mm256_min_epi32(_mm256_cvttps_epi32(r), lim);
            }
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs + g), pack_i8(q[0], q[1], q[2], q[3]));
            y[i].bsums[g / 16] = int16_t(hsum_i32(_mm256_add_epi32(q[0], q[1])));
            y[i].bsums[g / 16 + 1] = int16_t(hsum_i32(_mm256_add_epi32(q[2], q[3])));
        }
        y[i].d = 1 / iscale;
    }
}

void quantize_f16(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<uint16_t*>(vy);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

void quantize_bf16(const float* x, void* vy, int64_t n) {
    auto* y = static_cast<uint16_t*>(vy);
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
        // Round to nearest even: add 0x7fff plus the lowest kept bit; NaN keeps its top bits, made quiet.
        const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
        const __m256i rounded =
            _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
        const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
        const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
        const __m256i r = _mm256_blendv_epi8(rounded, nan, is_nan);
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_castsi256_si128(packed));
    }
    for (; i < n; ++i) y[i] = fp32_to_bf16(x[i]);
}

}  // namespace avx2
}  // namespace ggml::cpu
GGML_TARGET_END
#endif
