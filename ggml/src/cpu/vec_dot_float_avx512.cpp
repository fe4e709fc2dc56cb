// F32 and F16 dot products and tiles at the AVX-512 level: 16 lanes per accumulator (see
// kernels_x86_float_tile.h).
#include "kernels_x86_intrin.h"

#include <cstdint>
#include <cstring>

#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX512_BEGIN
#include "kernels_x86_avx512.h"
#include "kernels_x86_float_tile.h"

namespace ggml::cpu {
namespace {

inline __mmask16 first_n16(int count) {
    return __mmask16((1u << count) - 1);
}

struct LoadF32 {
    using Vec = __m512;
    static constexpr int kBytes = 4;  // of a weight
    static constexpr int kStep = 16;
    static __m512 zero() { return _mm512_setzero_ps(); }
    static __m512 load(const char* row, int64_t i) {
        return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + i);
    }
    static __m512 load_tail(const char* row, int64_t i, int count) {
        return _mm512_maskz_loadu_ps(first_n16(count), reinterpret_cast<const float*>(row) + i);
    }
    static __m512 madd(__m512 acc, __m512 x, __m512 y) { return _mm512_fmadd_ps(x, y, acc); }
    static float hsum(__m512 acc) { return hsum512(acc); }
    // The 16 sums of a 4 x 4 tile, each hsum's bits, in one reduction.
    static void hsum_tile4x4(const __m512 acc[4][4], float* s, size_t ldc) {
        const __m512 sums = hsum512_4x4(&acc[0][0]);
        // (Immediates spelled out: unoptimized builds do not unroll a loop into constants.)
        _mm_storeu_ps(s, _mm512_castps512_ps128(sums));
        _mm_storeu_ps(s + ldc, _mm512_extractf32x4_ps(sums, 1));
        _mm_storeu_ps(s + 2 * ldc, _mm512_extractf32x4_ps(sums, 2));
        _mm_storeu_ps(s + 3 * ldc, _mm512_extractf32x4_ps(sums, 3));
    }
};

struct LoadF16 : LoadF32 {
    static constexpr int kBytes = 2;
    static __m512 load(const char* row, int64_t i) {
        return _mm512_cvtph_ps(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(reinterpret_cast<const uint16_t*>(row) + i)));
    }
    static __m512 load_tail(const char* row, int64_t i, int count) {
        return _mm512_cvtph_ps(
            _mm256_maskz_loadu_epi16(first_n16(count), reinterpret_cast<const uint16_t*>(row) + i));
    }
};

}  // namespace

namespace avx512 {
void vec_dot_f32(int64_t n, float* s, const void* x, const void* y) {
    float_vec_dot<LoadF32>(n, s, x, y);
}
void vec_dot_f16(int64_t n, float* s, const void* x, const void* y) {
    float_vec_dot<LoadF16>(n, s, x, y);
}
void gemm_f32(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, int nr,
              int nc) {
    float_gemm<LoadF32, 4, 4>(n, s, ldc, x, bx, y, by, nr, nc);
}
void gemm_f16(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, int nr,
              int nc) {
    float_gemm<LoadF16, 4, 4>(n, s, ldc, x, bx, y, by, nr, nc);
}
}  // namespace avx512

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
