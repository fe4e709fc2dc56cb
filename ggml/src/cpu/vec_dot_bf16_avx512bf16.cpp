// BF16 dot products and tiles with AVX-512 BF16: vdpbf16ps multiplies 32 pairs per instruction and adds
// each lane's two products to its accumulator (see kernels_x86_float_tile.h).
#include "kernels_x86_intrin.h"

#include <cstdint>
#include <cstring>

#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX512BF16_BEGIN
#include "kernels_x86_avx512.h"
#include "kernels_x86_float_tile.h"

namespace ggml::cpu {
namespace {

struct LoadBF16 {
    static constexpr int kBytes = 2;  // of a weight
    using Vec = __m512i;  // 32 raw bfloat16
    static constexpr int kStep = 32;
    static __m512 zero() { return _mm512_setzero_ps(); }
    static __m512i load(const char* row, int64_t i) {
        return _mm512_loadu_si512(reinterpret_cast<const uint16_t*>(row) + i);
    }
    static __m512i load_tail(const char* row, int64_t i, int count) {
        return _mm512_maskz_loadu_epi16(__mmask32((uint64_t(1) << count) - 1),
                                        reinterpret_cast<const uint16_t*>(row) + i);
    }
    static __m512 madd(__m512 acc, __m512i x, __m512i y) {
        return _mm512_dpbf16_ps(acc, (__m512bh)x, (__m512bh)y);
    }
    static float hsum(__m512 acc) { return hsum512(acc); }
};

}  // namespace

namespace avx512bf16 {
void vec_dot_bf16(int64_t n, float* s, const void* x, const void* y) {
    float_vec_dot<LoadBF16>(n, s, x, y);
}
void gemm_bf16(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, int nr,
               int nc) {
    float_gemm<LoadBF16, 4, 4>(n, s, ldc, x, bx, y, by, nr, nc);
}
}  // namespace avx512bf16

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
