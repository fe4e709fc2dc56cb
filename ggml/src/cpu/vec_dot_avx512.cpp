// Dot products of block-quantized weight rows at the AVX-512 level: VNNI byte and word products
// (vpdpbusd, vpdpwssd) on 256-bit vectors. Bit-identical to the reference (see kernels_x86_dot.h).
#include "kernels_x86_intrin.h"

#include <cstdint>
#include <cstring>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"
#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX512_BEGIN
#include "kernels_x86_dot.h"

namespace ggml::cpu {
namespace {

struct DotVnni {
    template <int kOffset>
    static __m256i dot32(__m256i u, __m256i y) {
        const __m256i zero = _mm256_setzero_si256();
        const __m256i p = _mm256_dpbusd_epi32(zero, u, y);
        if constexpr (kOffset == 0) return p;
        // kOffset * y, summed over the same 4-byte lanes.
        return _mm256_sub_epi32(p, _mm256_dpbusd_epi32(zero, _mm256_set1_epi8(char(kOffset)), y));
    }
    static __m256i madd_acc(__m256i acc, __m256i p, __m256i s) { return _mm256_dpwssd_epi32(acc, p, s); }
};

}  // namespace

namespace avx512 {
void vec_dot_q4_0(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotVnni, DecodeQ4_0>(n, s, x, y);
}
void vec_dot_q4_1(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotVnni, DecodeQ4_1>(n, s, x, y);
}
void vec_dot_q5_0(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotVnni, DecodeQ5_0>(n, s, x, y);
}
void vec_dot_q5_1(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotVnni, DecodeQ5_1>(n, s, x, y);
}
void vec_dot_q8_0(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotVnni, DecodeQ8_0>(n, s, x, y);
}
void vec_dot_iq4_nl(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotVnni, DecodeIQ4_NL>(n, s, x, y);
}
void vec_dot_mxfp4(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_blocks32<DotVnni, DecodeMXFP4>(n, s, x, y);
}
void vec_dot_q2_K(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_superblocks<DotVnni, DecodeQ2_K>(n, s, x, y);
}
void vec_dot_q3_K(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_superblocks<DotVnni, DecodeQ3_K>(n, s, x, y);
}
void vec_dot_q4_K(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_superblocks<DotVnni, DecodeQ4_K>(n, s, x, y);
}
void vec_dot_q5_K(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_superblocks<DotVnni, DecodeQ5_K>(n, s, x, y);
}
void vec_dot_q6_K(int64_t n, float* s, const void* x, const void* y) {
    vec_dot_superblocks<DotVnni, DecodeQ6_K>(n, s, x, y);
}
}  // namespace avx512

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
