// Row kernels of softmax, attention and SiLU (attn_kernels.h) at the AVX-512 level, bit-identical to
// their scalar forms.
//
// exp: the ops call std::exp (glibc's expf). Its algorithm (sysdeps/ieee754/flt-32/e_expf.c, the FMA
// variant glibc picks on CPUs with FMA) is a handful of double-precision steps and a 32-entry table, so
// eight lanes of the same steps give the same bits. Arguments outside its main range (|x| >= 88, inf,
// nan) go to std::exp lane by lane. Whether the C library computes exactly these steps is checked once,
// at first use, on a spread of arguments; if not, every exp goes to std::exp.
#include "kernels_x86_intrin.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "../expf_steps.h"
#include "ggml/quants.h"
#include "attn_kernels.h"
#include "kernels.h"
#include "kernels_simd_target.h"
#include "kv_blocks.h"

namespace ggml::cpu {

namespace {

inline float silu_scalar(float x) {
    return x / (1.0f + std::exp(-x));
}

double exp_row_scalar(const float* x, float m, float* y, int64_t n, double sum) {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) {
        const float e = x[i] == neg_inf ? 0.0f : std::exp(x[i] - m);
        y[i] = e;
        sum += e;
    }
    return sum;
}

float scale_mask_max_scalar(const float* x, float scale, const float* mask, float* y, int64_t n) {
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) {
        y[i] = x[i] * scale + (mask ? mask[i] : 0.0f);
        mx = y[i] > mx ? y[i] : mx;
    }
    return mx;
}

inline float value_of(const float* v, size_t i) {
    return v[i];
}
inline float value_of(const uint16_t* v, size_t i) {
    return fp16_to_fp32(v[i]);
}

template <typename V>
void weighted_sum_scalar(int64_t n, const float* w, const V* v, size_t v_stride, int64_t d, double* acc,
                         float* out, const RowBlocks* blocks) {
    for (int64_t j = 0; j < d; ++j) acc[j] = 0.0;
    const int64_t spans = kv_spans(blocks);
    for (int64_t s = 0; s < spans; ++s) {
        int64_t i0, i1;
        kv_span(blocks, s, n, &i0, &i1);
        for (int64_t i = i0; i < i1; ++i) {
            if (w[i] == 0.0f) continue;
            const V* row = v + (size_t)i * v_stride;
            for (int64_t j = 0; j < d; ++j) acc[j] += (double)w[i] * (double)value_of(row, (size_t)j);
        }
    }
    f64_to_f32_row(acc, out, d);
}

}  // namespace

#if defined(__x86_64__)
GGML_TARGET_AVX512_BEGIN
namespace {

// glibc's expf steps (expf_steps.h).
alignas(64) constexpr uint64_t kExpTable[32] = GGML_EXPF_TABLE;
using expf_steps::kC0;
using expf_steps::kC1;
using expf_steps::kC2;
using expf_steps::kInvLn2N;
using expf_steps::kShift;

inline __m512d bits_pd(uint64_t u) {
    return _mm512_castsi512_pd(_mm512_set1_epi64((long long)u));
}

// exp of 8 floats; lanes set in *special (|x| >= 88, inf, nan) are not computed and need std::exp.
inline __m256 exp8(__m256 x, __mmask8* special) {
    const __m256i abstop =
        _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), _mm256_set1_epi32(0x7ff));
    *special = _mm256_cmpgt_epi32_mask(abstop, _mm256_set1_epi32(0x42a));
    const __m512d inv_ln2n = bits_pd(kInvLn2N), shift = bits_pd(kShift);
    const __m512d xd = _mm512_cvtps_pd(x);
    const __m512d z = _mm512_fmadd_pd(inv_ln2n, xd, shift);
    const __m512i ki = _mm512_castpd_si512(z);
    const __m512d kd = _mm512_sub_pd(z, shift);
    const __m512d r = _mm512_fmsub_pd(inv_ln2n, xd, kd);
    const __m512i t0 = _mm512_load_si512(kExpTable), t1 = _mm512_load_si512(kExpTable + 8);
    const __m512i t2 = _mm512_load_si512(kExpTable + 16), t3 = _mm512_load_si512(kExpTable + 24);
    const __m512i lo = _mm512_permutex2var_epi64(t0, ki, t1), hi = _mm512_permutex2var_epi64(t2, ki, t3);
    __m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), lo, hi);
    t = _mm512_add_epi64(t, _mm512_slli_epi64(ki, 47));
    const __m512d s = _mm512_castsi512_pd(t);
    const __m512d zz = _mm512_fmadd_pd(bits_pd(kC0), r, bits_pd(kC1));
    const __m512d r2 = _mm512_mul_pd(r, r);
    __m512d y = _mm512_fmadd_pd(r, bits_pd(kC2), _mm512_set1_pd(1.0));
    y = _mm512_fmadd_pd(zz, r2, y);
    return _mm512_cvtpd_ps(_mm512_mul_pd(y, s));
}

// Whether exp8 equals std::exp here: arguments spread over the main range (every 4099th float bit
// pattern below 88 in magnitude) and around its edges.
bool exp8_matches_libm() {
    alignas(32) float x[8], y[8];
    int k = 0;
    auto check = [&]() {
        __mmask8 sp;
        _mm256_store_ps(y, exp8(_mm256_load_ps(x), &sp));
        for (int j = 0; j < 8; ++j) {
            if ((sp >> j) & 1) continue;
            const float want = std::exp(x[j]);
            if (std::memcmp(&want, &y[j], 4) != 0) return false;
        }
        return true;
    };
    for (uint32_t u = 0; u < 0x42b00000u; u += 4099) {
        for (uint32_t sign : {0u, 0x80000000u}) {
            const uint32_t b = u | sign;
            std::memcpy(&x[k], &b, 4);
            if (++k == 8) {
                k = 0;
                if (!check()) return false;
            }
        }
    }
    for (float v : {0.0f, -0.0f, 1.0f, -1.0f, 87.99f, -87.99f, 0.5f, -0.5f}) {
        x[k] = v;
        if (++k == 8) {
            k = 0;
            if (!check()) return false;
        }
    }
    return true;
}

bool exp8_ok() {
    static const bool ok = exp8_matches_libm();
    return ok;
}

template <bool kSum>
double exp_row_avx512(const float* x, float m, float* y, int64_t n, double sum) {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    const __m256 vm = _mm256_set1_ps(m), vninf = _mm256_set1_ps(neg_inf);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 vx = _mm256_loadu_ps(x + i);
        const __mmask8 masked = _mm256_cmp_ps_mask(vx, vninf, _CMP_EQ_OQ);
        if (masked == 0xff) {
            _mm256_storeu_ps(y + i, _mm256_setzero_ps());
            continue;  // adding zeros would not change the sum
        }
        __mmask8 special;
        const __m256 d = _mm256_sub_ps(vx, vm);
        const __m256 e = _mm256_maskz_mov_ps((__mmask8)~masked, exp8(d, &special));
        special &= (__mmask8)~masked;
        if (special) {  // y may be x: the arguments are taken from d, not from x
            alignas(32) float a[8], r[8];
            _mm256_store_ps(a, d);
            _mm256_store_ps(r, e);
            for (int j = 0; j < 8; ++j)
                if ((special >> j) & 1) r[j] = std::exp(a[j]);
            _mm256_storeu_ps(y + i, _mm256_load_ps(r));
        } else {
            _mm256_storeu_ps(y + i, e);
        }
        if constexpr (kSum)
            for (int j = 0; j < 8; ++j) sum += y[i + j];
    }
    for (; i < n; ++i) {
        const float e = x[i] == neg_inf ? 0.0f : std::exp(x[i] - m);
        y[i] = e;
        sum += e;
    }
    return sum;
}

// Eight rows' sums side by side, one lane each, so the rows' sequential additions overlap (a single row's
// sum is a chain of dependent adds): each lane adds its row's values in index order, as exp_row does.
void sum_rows_f64_avx512(const float* y, size_t stride, int nr, int64_t n, double* sums) {
    const __mmask8 rows = (__mmask8)((1u << nr) - 1);
    const __m256i index =
        _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)stride));
    __m512d acc = _mm512_maskz_loadu_pd(rows, sums);
    for (int64_t j = 0; j < n; ++j) {
        const __m256 v = _mm256_mmask_i32gather_ps(_mm256_setzero_ps(), rows, index, y + j, 4);
        acc = _mm512_add_pd(acc, _mm512_cvtps_pd(v));
    }
    _mm512_mask_storeu_pd(sums, rows, acc);
}

float scale_mask_max_avx512(const float* x, float scale, const float* mask, float* y, int64_t n) {
    const __m512 vs = _mm512_set1_ps(scale);
    __m512 vmx = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + i), vs);
        v = _mm512_add_ps(v, mask ? _mm512_loadu_ps(mask + i) : _mm512_setzero_ps());
        _mm512_storeu_ps(y + i, v);
        vmx = _mm512_max_ps(v, vmx);  // a nan in v keeps vmx, as the scalar comparison does
    }
    float mx = _mm512_reduce_max_ps(vmx);
    const float tail = scale_mask_max_scalar(x + i, scale, mask ? mask + i : nullptr, y + i, n - i);
    return tail > mx ? tail : mx;
}

// Columns [0, 8 * NV) of the weighted sum, accumulators in registers; lanes at or past d are not read or
// written.
// 8 values of a row as floats (lanes off: 0): f32 loaded, f16 converted (exactly: F16C's conversion
// differs from the reference only in quieting signalling NaNs, and a NaN value gives a NaN sum either way).
inline __m256 load8(const float* row, __mmask8 lanes) {
    return _mm256_maskz_loadu_ps(lanes, row);
}
inline __m256 load8(const uint16_t* row, __mmask8 lanes) {
    return _mm256_cvtph_ps(_mm_maskz_loadu_epi16(lanes, row));
}

template <int NV, typename V>
void weighted_sum_cols(int64_t n, const float* w, const V* v, size_t v_stride, int64_t d, float* out,
                       const RowBlocks* blocks) {
    __m512d acc[NV];
    __mmask8 lanes[NV];
    for (int k = 0; k < NV; ++k) {
        acc[k] = _mm512_setzero_pd();
        const int64_t left = d - 8 * k;
        lanes[k] = left >= 8 ? (__mmask8)0xff : (__mmask8)((1u << left) - 1);
    }
    const int64_t spans = kv_spans(blocks);
    for (int64_t s = 0; s < spans; ++s) {
        int64_t i0, i1;
        kv_span(blocks, s, n, &i0, &i1);
        for (int64_t i = i0; i < i1; ++i) {
            if (w[i] == 0.0f) continue;
            const __m512d a = _mm512_set1_pd((double)w[i]);
            const V* row = v + (size_t)i * v_stride;
            // The product of two floats is exact in double, so the fused form rounds as mul + add does.
            for (int k = 0; k < NV; ++k)
                acc[k] = _mm512_fmadd_pd(a, _mm512_cvtps_pd(load8(row + 8 * k, lanes[k])), acc[k]);
        }
    }
    for (int k = 0; k < NV; ++k) _mm256_mask_storeu_ps(out + 8 * k, lanes[k], _mm512_cvtpd_ps(acc[k]));
}

template <typename V>
void weighted_sum_avx512(int64_t n, const float* w, const V* v, size_t v_stride, int64_t d, float* out,
                         const RowBlocks* blocks) {
    for (int64_t c = 0; c < d; c += 128) {
        const int64_t dc = d - c < 128 ? d - c : 128;
        const V* vc = v + c;
        float* oc = out + c;
        switch ((dc + 7) / 8) {
            case 1:
                weighted_sum_cols<1>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 2:
                weighted_sum_cols<2>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 3:
                weighted_sum_cols<3>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 4:
                weighted_sum_cols<4>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 5:
                weighted_sum_cols<5>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 6:
                weighted_sum_cols<6>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 7:
                weighted_sum_cols<7>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 8:
                weighted_sum_cols<8>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 9:
                weighted_sum_cols<9>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 10:
                weighted_sum_cols<10>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 11:
                weighted_sum_cols<11>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 12:
                weighted_sum_cols<12>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 13:
                weighted_sum_cols<13>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 14:
                weighted_sum_cols<14>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            case 15:
                weighted_sum_cols<15>(n, w, vc, v_stride, dc, oc, blocks);
                break;
            default:
                weighted_sum_cols<16>(n, w, vc, v_stride, dc, oc, blocks);
                break;
        }
    }
}

void silu_row_avx512(const float* x, float* y, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 vx = _mm256_loadu_ps(x + i);
        __mmask8 special;
        const __m256 e = exp8(_mm256_xor_ps(vx, sign), &special);
        const __m256 r = _mm256_div_ps(vx, _mm256_add_ps(one, e));
        if (special) {  // y may be x: the arguments are taken from vx
            alignas(32) float a[8], b[8];
            _mm256_store_ps(a, vx);
            _mm256_store_ps(b, r);
            for (int j = 0; j < 8; ++j)
                if ((special >> j) & 1) b[j] = silu_scalar(a[j]);
            _mm256_storeu_ps(y + i, _mm256_load_ps(b));
        } else {
            _mm256_storeu_ps(y + i, r);
        }
    }
    for (; i < n; ++i) y[i] = silu_scalar(x[i]);
}

void swiglu_row_avx512(const float* x, const float* g, float* y, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 vx = _mm256_loadu_ps(x + i);
        __mmask8 special;
        const __m256 e = exp8(_mm256_xor_ps(vx, sign), &special);
        const __m256 vg = _mm256_loadu_ps(g + i);
        const __m256 r = _mm256_mul_ps(_mm256_div_ps(vx, _mm256_add_ps(one, e)), vg);
        if (special) {  // y may be x or g: the arguments are taken from vx and vg
            alignas(32) float a[8], c[8], b[8];
            _mm256_store_ps(a, vx);
            _mm256_store_ps(c, vg);
            _mm256_store_ps(b, r);
            for (int j = 0; j < 8; ++j)
                if ((special >> j) & 1) b[j] = silu_scalar(a[j]) * c[j];
            _mm256_storeu_ps(y + i, _mm256_load_ps(b));
        } else {
            _mm256_storeu_ps(y + i, r);
        }
    }
    for (; i < n; ++i) y[i] = silu_scalar(x[i]) * g[i];
}

}  // namespace
GGML_TARGET_END
#endif

namespace {
bool use_avx512_exp() {
#if defined(__x86_64__)
    return isa_level() >= IsaLevel::Avx512 && exp8_ok();
#else
    return false;
#endif
}
}  // namespace

double exp_row(const float* x, float m, float* y, int64_t n, double sum0) {
#if defined(__x86_64__)
    if (use_avx512_exp()) return exp_row_avx512<true>(x, m, y, n, sum0);
#endif
    return exp_row_scalar(x, m, y, n, sum0);
}

void exp_row_values(const float* x, float m, float* y, int64_t n) {
#if defined(__x86_64__)
    if (use_avx512_exp()) {
        exp_row_avx512<false>(x, m, y, n, 0.0);
        return;
    }
#endif
    exp_row_scalar(x, m, y, n, 0.0);
}

void sum_rows_f64(const float* y, size_t stride, int nr, int64_t n, double* sums) {
#if defined(__x86_64__)
    // The gather's offsets are 32-bit element indices.
    if (isa_level() >= IsaLevel::Avx512 && nr <= 8 && stride * 7 < (size_t)INT32_MAX)
        return sum_rows_f64_avx512(y, stride, nr, n, sums);
#endif
    for (int r = 0; r < nr; ++r)
        for (int64_t j = 0; j < n; ++j) sums[r] += y[(size_t)r * stride + (size_t)j];
}

float scale_mask_max_row(const float* x, float scale, const float* mask, float* y, int64_t n) {
#if defined(__x86_64__)
    if (isa_level() >= IsaLevel::Avx512) return scale_mask_max_avx512(x, scale, mask, y, n);
#endif
    return scale_mask_max_scalar(x, scale, mask, y, n);
}

void weighted_sum_f64(int64_t n, const float* w, const float* v, size_t v_stride, int64_t d, double* acc,
                      float* out, const RowBlocks* blocks) {
#if defined(__x86_64__)
    if (isa_level() >= IsaLevel::Avx512) return weighted_sum_avx512(n, w, v, v_stride, d, out, blocks);
#endif
    weighted_sum_scalar(n, w, v, v_stride, d, acc, out, blocks);
}

void weighted_sum_f64(int64_t n, const float* w, const uint16_t* v, size_t v_stride, int64_t d, double* acc,
                      float* out, const RowBlocks* blocks) {
#if defined(__x86_64__)
    if (isa_level() >= IsaLevel::Avx512) return weighted_sum_avx512(n, w, v, v_stride, d, out, blocks);
#endif
    weighted_sum_scalar(n, w, v, v_stride, d, acc, out, blocks);
}

void silu_row(const float* x, float* y, int64_t n) {
#if defined(__x86_64__)
    if (use_avx512_exp()) return silu_row_avx512(x, y, n);
#endif
    for (int64_t i = 0; i < n; ++i) y[i] = silu_scalar(x[i]);
}

void swiglu_row(const float* x, const float* g, float* y, int64_t n) {
#if defined(__x86_64__)
    if (use_avx512_exp()) return swiglu_row_avx512(x, g, y, n);
#endif
    for (int64_t i = 0; i < n; ++i) y[i] = silu_scalar(x[i]) * g[i];
}

}  // namespace ggml::cpu
