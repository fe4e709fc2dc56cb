// Dot products of block-quantized weight rows at the AVX2 level: vpmaddubsw and vpmaddwd
// products. Bit-identical to the reference (see kernels_x86_dot.h).
#include "kernels_x86_intrin.h"

#include <cstdint>
#include <cstring>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"
#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX2_BEGIN
#include "kernels_x86_dot.h"

namespace ggml::cpu {
namespace {

struct DotAvx2 {
    template <int kOffset>
    static __m256i dot32(__m256i u, __m256i y) {
        const __m256i ones = _mm256_set1_epi16(1);
        // Unsigned levels multiply directly; offset ones go signed and the sign moves onto y.
        if constexpr (kOffset == 0) return _mm256_madd_epi16(_mm256_maddubs_epi16(u, y), ones);
        const __m256i w = _mm256_sub_epi8(u, _mm256_set1_epi8(char(kOffset)));
        return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(y, w)), ones);
    }
    static __m256i madd_acc(__m256i acc, __m256i p, __m256i s) {
        return _mm256_add_epi32(acc, _mm256_madd_epi16(p, s));
    }
};

}  // namespace

namespace avx2 {
void vec_dot_q4_0(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotAvx2, DecodeQ4_0>(n, s, x, y);
}
void vec_dot_q4_1(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotAvx2, DecodeQ4_1>(n, s, x, y);
}
void vec_dot_q5_0(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotAvx2, DecodeQ5_0>(n, s, x, y);
}
void vec_dot_q5_1(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotAvx2, DecodeQ5_1>(n, s, x, y);
}
void vec_dot_q8_0(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotAvx2, DecodeQ8_0>(n, s, x, y);
}
void vec_dot_iq4_nl(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotAvx2, DecodeIQ4_NL>(n, s, x, y);
}
void vec_dot_mxfp4(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotAvx2, DecodeMXFP4>(n, s, x, y);
}
void vec_dot_q2_K(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_superblocks<DotAvx2, DecodeQ2_K>(n, s, x, y);
}
void vec_dot_q3_K(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_superblocks<DotAvx2, DecodeQ3_K>(n, s, x, y);
}
void vec_dot_q4_K(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_superblocks<DotAvx2, DecodeQ4_K>(n, s, x, y);
}
void vec_dot_q5_K(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_superblocks<DotAvx2, DecodeQ5_K>(n, s, x, y);
}
void vec_dot_q6_K(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_superblocks<DotAvx2, DecodeQ6_K>(n, s, x, y);
}
}  // namespace avx2

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
