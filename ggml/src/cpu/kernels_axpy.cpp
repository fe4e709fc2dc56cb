// y += a * x for attention, at every level. The product is rounded before the sum (no fused
// multiply-add), so all levels give the same bits and each element depends only on its inputs.
#include "kernels_x86_intrin.h"

#include <cstdint>

#include "kernels_levels.h"
#include "kernels_simd_target.h"

namespace ggml::cpu::scalar {
void axpy_f32(int64_t n, float a, const float* x, float* y) {
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] + a * x[i];
}
}  // namespace ggml::cpu::scalar

#if defined(__x86_64__)
GGML_TARGET_AVX2_BEGIN
namespace ggml::cpu::avx2 {
void axpy_f32(int64_t n, float a, const float* x, float* y) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i,
                         _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_mul_ps(va, _mm256_loadu_ps(x + i))));
    for (; i < n; ++i) y[i] = y[i] + a * x[i];
}
}  // namespace ggml::cpu::avx2
GGML_TARGET_END

GGML_TARGET_AVX512_BEGIN
namespace ggml::cpu::avx512 {
void axpy_f32(int64_t n, float a, const float* x, float* y) {
    const __m512 va = _mm512_set1_ps(a);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i,
                         _mm512_add_ps(_mm512_loadu_ps(y + i), _mm512_mul_ps(va, _mm512_loadu_ps(x + i))));
    if (i < n) {
        const __mmask16 m = __mmask16((1u << (n - i)) - 1);
        const __m512 prod = _mm512_mul_ps(va, _mm512_maskz_loadu_ps(m, x + i));
        _mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i), prod));
    }
}
}  // namespace ggml::cpu::avx512
GGML_TARGET_END
#endif
