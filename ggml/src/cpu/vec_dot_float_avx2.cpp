// F32, F16 and BF16 dot products and tiles at the AVX2 level: 8 lanes per accumulator (see
// kernels_x86_float_tile.h).
#include "kernels_x86_intrin.h"

#include <cstdint>
#include <cstring>

#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX2_BEGIN
#include "kernels_x86_float_tile.h"
#include "kernels_x86_vec.h"

namespace ggml::cpu {
namespace {

inline float hsum256(__m256 v) {
    __m128 b = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    b = _mm_add_ps(b, _mm_movehl_ps(b, b));
    b = _mm_add_ss(b, _mm_movehdup_ps(b));
    return _mm_cvtss_f32(b);
}

// The first count (< 8) 16-bit values of p, zero-padded to 8.
inline __m128i load_tail16(const uint16_t* p, int count) {
    alignas(16) uint16_t tmp[8] = {};
    std::memcpy(tmp, p, size_t(count) * sizeof(uint16_t));
    return _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
}

struct LoadF32 {
    using Vec = __m256;
    static constexpr int kBytes = 4;  // of a weight
    static constexpr int kStep = 8;
    static __m256 zero() { return _mm256_setzero_ps(); }
    static __m256 load(const char* row, int64_t i) {
        return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
    }
    static __m256 load_tail(const char* row, int64_t i, int count) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(count), lane);
        return _mm256_maskload_ps(reinterpret_cast<const float*>(row) + i, mask);
    }
    static __m256 madd(__m256 acc, __m256 x, __m256 y) { return _mm256_fmadd_ps(x, y, acc); }
    static float hsum(__m256 acc) { return hsum256(acc); }
};

struct LoadF16 : LoadF32 {
    static constexpr int kBytes = 2;
    static __m256 load(const char* row, int64_t i) {
        return _mm256_cvtph_ps(load128(reinterpret_cast<const uint16_t*>(row) + i));
    }
    static __m256 load_tail(const char* row, int64_t i, int count) {
        return _mm256_cvtph_ps(load_tail16(reinterpret_cast<const uint16_t*>(row) + i, count));
    }
};

struct LoadBF16 : LoadF32 {
    static constexpr int kBytes = 2;
    static __m256 widen(__m128i h) {
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    static __m256 load(const char* row, int64_t i) {
        return widen(load128(reinterpret_cast<const uint16_t*>(row) + i));
    }
    static __m256 load_tail(const char* row, int64_t i, int count) {
        return widen(load_tail16(reinterpret_cast<const uint16_t*>(row) + i, count));
    }
};

}  // namespace

namespace avx2 {
void vec_dot_f32(int64_t n, float* s, const void* x, const void* y) {
    float_vec_dot<LoadF32>(n, s, x, y);
}
void vec_dot_f16(int64_t n, float* s, const void* x, const void* y) {
    float_vec_dot<LoadF16>(n, s, x, y);
}
void vec_dot_bf16(int64_t n, float* s, const void* x, const void* y) {
    float_vec_dot<LoadBF16>(n, s, x, y);
}
void gemm_f32(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, int nr,
              int nc) {
    float_gemm<LoadF32, 3, 3>(n, s, ldc, x, bx, y, by, nr, nc);
}
void gemm_f16(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, int nr,
              int nc) {
    float_gemm<LoadF16, 3, 3>(n, s, ldc, x, bx, y, by, nr, nc);
}
void gemm_bf16(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, int nr,
               int nc) {
    float_gemm<LoadBF16, 3, 3>(n, s, ldc, x, bx, y, by, nr, nc);
}
}  // namespace avx2

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
