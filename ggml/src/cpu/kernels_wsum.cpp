// The weighted sum of attention values for many queries at once (mul_mat_t over a batch): the values are
// converted to double once per group of queries, and each vector of them, once loaded, feeds up to four
// queries' sums (one fused multiply-add each). Each step is weighted_sum_f64's (the product of two
// floats is exact in double, the sums run over the rows in order and skip zero weights), so the results are
// its bits at every instruction-set level.
#include "kernels_x86_intrin.h"

#include <cstdint>

#include "attn_kernels.h"
#include "ggml/quants.h"
#include "kernels.h"
#include "kernels_simd_target.h"

namespace ggml::cpu {

namespace {

void wsum_add_scalar(int64_t n, const double* w, size_t w_stride, const uint16_t* seen, int nq, const double* v,
                     int64_t d, double* acc, size_t acc_stride) {
    for (int q = 0; q < nq; ++q) {
        const double* wq = w + q * w_stride;
        double* aq = acc + q * acc_stride;
        for (int64_t i = 0; i < n; ++i) {
            if (!((seen[i] >> q) & 1)) continue;
            const double* row = v + i * d;
            for (int64_t j = 0; j < d; ++j) aq[j] += wq[i] * row[j];
        }
    }
}

}  // namespace

#if defined(__x86_64__)
GGML_TARGET_AVX512_BEGIN
namespace {

// NQ queries (bits q0 .. q0 + NQ - 1 of seen), 32 columns at a time: each value vector is loaded once for
// all the queries. A row every query sees takes plain fused multiply-adds, a row some see a masked one (the
// others' sums stay as they are, as the one-query sum skips the row), a row none sees nothing.
template <int NQ>
void wsum_add_queries(int64_t n, const double* w, size_t w_stride, const uint16_t* seen, int q0, const double* v,
                      int64_t d, double* acc, size_t acc_stride) {
    constexpr int NV = 4;
    constexpr unsigned kAll = (1u << NQ) - 1;
    for (int64_t c = 0; c < d; c += 8 * NV) {
        __mmask8 lanes[NV];
        __m512d sum[NQ][NV];
        for (int k = 0; k < NV; ++k) {
            const int64_t left = d - c - 8 * k;
            lanes[k] = left >= 8 ? (__mmask8)0xff : left <= 0 ? (__mmask8)0 : (__mmask8)((1u << left) - 1);
            for (int q = 0; q < NQ; ++q)
                sum[q][k] = _mm512_maskz_loadu_pd(lanes[k], acc + q * acc_stride + c + 8 * k);
        }
        const double* row = v + c;
        for (int64_t i = 0; i < n; ++i, row += d) {
            const unsigned bits = (seen[i] >> q0) & kAll;
            if (!bits) continue;  // a row no query of the group sees (masked, or past a causal edge)
            __m512d x[NV];
            for (int k = 0; k < NV; ++k) x[k] = _mm512_maskz_loadu_pd(lanes[k], row + 8 * k);
            if (bits == kAll) {
                for (int q = 0; q < NQ; ++q) {
                    const __m512d a = _mm512_set1_pd(w[q * w_stride + i]);
                    for (int k = 0; k < NV; ++k) sum[q][k] = _mm512_fmadd_pd(a, x[k], sum[q][k]);
                }
            } else {
                for (int q = 0; q < NQ; ++q) {
                    const __m512d a = _mm512_set1_pd(w[q * w_stride + i]);
                    const __mmask8 on = (bits >> q) & 1 ? (__mmask8)0xff : (__mmask8)0;
                    for (int k = 0; k < NV; ++k) sum[q][k] = _mm512_mask3_fmadd_pd(a, x[k], sum[q][k], on);
                }
            }
        }
        for (int k = 0; k < NV; ++k)
            for (int q = 0; q < NQ; ++q)
                _mm512_mask_storeu_pd(acc + q * acc_stride + c + 8 * k, lanes[k], sum[q][k]);
    }
}

void wsum_add_avx512(int64_t n, const double* w, size_t w_stride, const uint16_t* seen, int nq, const double* v,
                     int64_t d, double* acc, size_t acc_stride) {
    int q = 0;
    for (; q + 4 <= nq; q += 4)
        wsum_add_queries<4>(n, w + q * w_stride, w_stride, seen, q, v, d, acc + q * acc_stride, acc_stride);
    const double* wq = w + q * w_stride;
    double* aq = acc + q * acc_stride;
    switch (nq - q) {
        case 3:
            return wsum_add_queries<3>(n, wq, w_stride, seen, q, v, d, aq, acc_stride);
        case 2:
            return wsum_add_queries<2>(n, wq, w_stride, seen, q, v, d, aq, acc_stride);
        case 1:
            return wsum_add_queries<1>(n, wq, w_stride, seen, q, v, d, aq, acc_stride);
        default:
            return;
    }
}

void weights_f64_avx512(const float* w, int64_t n, int q, double* wd, uint16_t* seen) {
    const __m256i bit = _mm256_set1_epi16((short)(1u << q));
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps(w + i);
        const __mmask16 nz = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NEQ_UQ);
        _mm512_storeu_pd(wd + i, _mm512_cvtps_pd(_mm512_castps512_ps256(x)));
        _mm512_storeu_pd(wd + i + 8, _mm512_cvtps_pd(_mm512_extractf32x8_ps(x, 1)));
        const __m256i old = _mm256_loadu_si256((const __m256i*)(seen + i));
        _mm256_storeu_si256((__m256i*)(seen + i), _mm256_or_si256(old, _mm256_maskz_mov_epi16(nz, bit)));
    }
    for (; i < n; ++i) {
        wd[i] = (double)w[i];
        if (w[i] != 0.0f) seen[i] |= (uint16_t)(1u << q);
    }
}

void f16_to_f64_avx512(const uint16_t* x, double* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(y + i, _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(x + i)))));
    for (; i < n; ++i) y[i] = (double)fp16_to_fp32(x[i]);
}

void f32_to_f64_avx512(const float* x, double* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, _mm512_cvtps_pd(_mm256_loadu_ps(x + i)));
    for (; i < n; ++i) y[i] = (double)x[i];
}

}  // namespace
GGML_TARGET_END
#endif

void weighted_sum_f64_add(int64_t n, const double* w, size_t w_stride, const uint16_t* seen, int nq,
                          const double* v, int64_t d, double* acc, size_t acc_stride) {
#if defined(__x86_64__)
    if (isa_level() >= IsaLevel::Avx512) return wsum_add_avx512(n, w, w_stride, seen, nq, v, d, acc, acc_stride);
#endif
    wsum_add_scalar(n, w, w_stride, seen, nq, v, d, acc, acc_stride);
}

void weights_to_f64(const float* w, int64_t n, int q, double* wd, uint16_t* seen) {
#if defined(__x86_64__)
    if (isa_level() >= IsaLevel::Avx512) return weights_f64_avx512(w, n, q, wd, seen);
#endif
    for (int64_t i = 0; i < n; ++i) {
        wd[i] = (double)w[i];
        if (w[i] != 0.0f) seen[i] |= (uint16_t)(1u << q);
    }
}

void to_f64_row(const uint16_t* x, double* y, int64_t n) {
#if defined(__x86_64__)
    if (isa_level() >= IsaLevel::Avx512) return f16_to_f64_avx512(x, y, n);
#endif
    for (int64_t i = 0; i < n; ++i) y[i] = (double)fp16_to_fp32(x[i]);
}

void to_f64_row(const float* x, double* y, int64_t n) {
#if defined(__x86_64__)
    if (isa_level() >= IsaLevel::Avx512) return f32_to_f64_avx512(x, y, n);
#endif
    for (int64_t i = 0; i < n; ++i) y[i] = (double)x[i];
}

void value_row_to_f64(Type type, const void* row, double* y, int64_t n, float* tmp) {
    if (type == Type::F16) return to_f64_row(static_cast<const uint16_t*>(row), y, n);
    if (type == Type::F32) return to_f64_row(static_cast<const float*>(row), y, n);
    cpu::to_float(type)(row, tmp, n);
    to_f64_row(tmp, y, n);
}

}  // namespace ggml::cpu
