// F16 and BF16 rows to float at the AVX-512 level, exactly as the reference conversions.
#include "kernels_x86_intrin.h"

#include <cstdint>
#include <cstring>

#include "ggml/quants.h"
#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX512_BEGIN

namespace ggml::cpu::avx512 {

void to_float_f16(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const uint16_t*>(vx);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 f = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
        _mm512_storeu_ps(y + i, f);
        // F16C quiets signalling NaNs; the reference keeps them as they are.
        if (_mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q))
            for (int k = 0; k < 16; ++k) y[i + k] = fp16_to_fp32(x[i + k]);
    }
    if (i < n) {  // the tail (and rows shorter than 16, such as 8-wide attention heads) with masked lanes
        const __mmask16 lanes = (__mmask16)((1u << (n - i)) - 1);
        const __m512 f = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lanes, x + i));
        _mm512_mask_storeu_ps(y + i, lanes, f);
        if (_mm512_mask_cmp_ps_mask(lanes, f, f, _CMP_UNORD_Q))
            for (; i < n; ++i) y[i] = fp16_to_fp32(x[i]);
    }
}

void to_float_bf16(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const uint16_t*>(vx);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
        _mm512_storeu_si512(y + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    for (; i < n; ++i) y[i] = bf16_to_fp32(x[i]);
}

void f16_to_f32_row(const uint16_t* x, float* y, int64_t n) {
    to_float_f16(x, y, n);
}

}  // namespace ggml::cpu::avx512
GGML_TARGET_END
#endif
