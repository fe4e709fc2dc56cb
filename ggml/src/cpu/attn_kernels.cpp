#include "attn_kernels.h"

#include "kernels_x86_intrin.h"

#include "ggml/types.h"
#include "kernels.h"
#include "kernels_simd_target.h"

namespace ggml::cpu {

namespace {

void round_f16_scalar(float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = fp16_to_fp32(fp32_to_fp16(x[i]));
}
void axpy_f64_scalar(int64_t n, float a, const float* x, double* y) {
    for (int64_t i = 0; i < n; ++i) y[i] += (double)a * (double)x[i];
}
void f64_to_f32_scalar(const double* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = (float)x[i];
}

}  // namespace

#if defined(__x86_64__)
GGML_TARGET_AVX512_BEGIN
namespace {
void round_f16_avx512(float* x, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i h =
            _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm512_storeu_ps(x + i, _mm512_cvtph_ps(h));
    }
    round_f16_scalar(x + i, n - i);
}
void axpy_f64_avx512(int64_t n, float a, const float* x, double* y) {
    const __m512d va = _mm512_set1_pd((double)a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d vx = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
        _mm512_storeu_pd(y + i, _mm512_add_pd(_mm512_loadu_pd(y + i), _mm512_mul_pd(va, vx)));
    }
    axpy_f64_scalar(n - i, a, x + i, y + i);
}
void f64_to_f32_avx512(const double* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm512_cvtpd_ps(_mm512_loadu_pd(x + i)));
    f64_to_f32_scalar(x + i, y + i, n - i);
}
}  // namespace
GGML_TARGET_END

GGML_TARGET_AVX2_BEGIN
namespace {
void round_f16_avx2(float* x, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h =
            _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
    }
    round_f16_scalar(x + i, n - i);
}
void axpy_f64_avx2(int64_t n, float a, const float* x, double* y) {
    const __m256d va = _mm256_set1_pd((double)a);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m256d vx = _mm256_cvtps_pd(_mm_loadu_ps(x + i));
        _mm256_storeu_pd(y + i, _mm256_add_pd(_mm256_loadu_pd(y + i), _mm256_mul_pd(va, vx)));
    }
    axpy_f64_scalar(n - i, a, x + i, y + i);
}
void f64_to_f32_avx2(const double* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm256_cvtpd_ps(_mm256_loadu_pd(x + i)));
    f64_to_f32_scalar(x + i, y + i, n - i);
}
}  // namespace
GGML_TARGET_END
#endif

void round_f16_row(float* x, int64_t n) {
#if defined(__x86_64__)
    switch (isa_level()) {
        case IsaLevel::Amx:
        case IsaLevel::Avx512:
            return round_f16_avx512(x, n);
        case IsaLevel::Avx2:
            return round_f16_avx2(x, n);
        default:
            break;
    }
#endif
    round_f16_scalar(x, n);
}

void axpy_f64(int64_t n, float a, const float* x, double* y) {
#if defined(__x86_64__)
    switch (isa_level()) {
        case IsaLevel::Amx:
        case IsaLevel::Avx512:
            return axpy_f64_avx512(n, a, x, y);
        case IsaLevel::Avx2:
            return axpy_f64_avx2(n, a, x, y);
        default:
            break;
    }
#endif
    axpy_f64_scalar(n, a, x, y);
}

void f64_to_f32_row(const double* x, float* y, int64_t n) {
#if defined(__x86_64__)
    switch (isa_level()) {
        case IsaLevel::Amx:
        case IsaLevel::Avx512:
            return f64_to_f32_avx512(x, y, n);
        case IsaLevel::Avx2:
            return f64_to_f32_avx2(x, y, n);
        default:
            break;
    }
#endif
    f64_to_f32_scalar(x, y, n);
}

}  // namespace ggml::cpu
