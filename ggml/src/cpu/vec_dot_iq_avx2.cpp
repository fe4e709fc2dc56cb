// Dot products of the IQ and TQ formats at the AVX2 level (also used at the AVX-512 level: there are
// no AVX-512 versions). Bit-identical to the references (ggml/src/quants/iq*.cpp, tq.cpp): the
// integer sums of a super-block are exact in int32 lanes (vpmaddubsw of unsigned grid magnitudes with
// sign-adjusted activations, then vpmaddwd by the group scales), then the reference's float term.
#include "kernels_x86_intrin.h"

#include <cstdint>
#include <cstring>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"
#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX2_BEGIN
#include "kernels_x86_decode.h"

namespace ggml::cpu {
namespace {

// The sign byte of each 7-bit IQ2/IQ3 sign group (iq::signs_of).
constexpr iq::Table<uint8_t, 128> kSigns = [] {
    iq::Table<uint8_t, 128> t{};
    for (uint32_t i = 0; i < 128; ++i) t.v[i] = iq::signs_of(i);
    return t;
}();

inline uint32_t load_u32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Four sign groups of a 32-bit word (bits 0-27) as four sign bytes.
inline uint32_t signs4(uint32_t aux) {
    return uint32_t(kSigns[aux & 127]) | uint32_t(kSigns[(aux >> 7) & 127]) << 8 |
           uint32_t(kSigns[(aux >> 14) & 127]) << 16 | uint32_t(kSigns[(aux >> 21) & 127]) << 24;
}

// q with byte j negated where bit j % 8 of byte j / 8 of s is set.
inline __m256i apply_signs(__m256i q, uint32_t s) {
    const __m256i which = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2,
                                           2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
    const __m256i set = _mm256_cmpeq_epi8(
        _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32(int32_t(s)), which), bit), bit);
    return _mm256_sign_epi8(q, _mm256_or_si256(set, _mm256_set1_epi8(1)));
}

inline __m256i grid4(const iq::Table<uint64_t, 256>& g, uint32_t idx) {
    return _mm256_set_epi64x(int64_t(g[idx >> 24]), int64_t(g[(idx >> 16) & 255]), int64_t(g[(idx >> 8) & 255]),
                             int64_t(g[idx & 255]));
}
template <size_t N>
inline __m256i grid4(const iq::Table<uint64_t, N>& g, int i0, int i1, int i2, int i3) {
    return _mm256_set_epi64x(int64_t(g[size_t(i3)]), int64_t(g[size_t(i2)]), int64_t(g[size_t(i1)]),
                             int64_t(g[size_t(i0)]));
}
template <size_t N>
inline __m256i grid8(const iq::Table<uint32_t, N>& g, const int i[8]) {
    return _mm256_setr_epi32(int32_t(g[size_t(i[0])]), int32_t(g[size_t(i[1])]), int32_t(g[size_t(i[2])]),
                             int32_t(g[size_t(i[3])]), int32_t(g[size_t(i[4])]), int32_t(g[size_t(i[5])]),
                             int32_t(g[size_t(i[6])]), int32_t(g[size_t(i[7])]));
}

// acc + the pair sums of u * q (u unsigned, small enough for int16 pairs) times `scale` (int16 lanes).
inline __m256i madd_scaled(__m256i acc, __m256i u, __m256i q, __m256i scale) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, q), scale));
}
// Scale lo for the first 16 bytes (int32 lanes 0-3), hi for the last 16.
inline __m256i scales2(int lo, int hi) {
    return _mm256_set_m128i(_mm_set1_epi16(short(hi)), _mm_set1_epi16(short(lo)));
}

// Signed levels w times q: |w| * (q with w's sign) (|w| <= 127, so the pair sums fit int16).
inline __m256i signed_product(__m256i w, __m256i q) {
    return _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(q, w));
}

// TQ1_0: trit n of bytes b (16-bit lanes) is ((b * 3^n mod 256) * 3) >> 8.
inline __m256i trits(__m256i b16, __m256i pow3) {
    const __m256i prod = _mm256_and_si256(_mm256_mullo_epi16(b16, pow3), _mm256_set1_epi16(0xff));
    return _mm256_srli_epi16(_mm256_mullo_epi16(prod, _mm256_set1_epi16(3)), 8);
}
inline __m256i widen(const int8_t* q) {
    return _mm256_cvtepi8_epi16(load128(q));
}

inline int32_t sum_bsums(const BlockQ8_K& y) {
    return hsum_i32(_mm256_madd_epi16(load256(y.bsums), _mm256_set1_epi16(1)));
}

}  // namespace

namespace avx2 {

void vec_dot_iq2_xxs(int64_t n, float* s, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockIQ2_XXS*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const auto* qs = reinterpret_cast<const uint8_t*>(x[i].qs);
        __m256i acc = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const uint32_t idx = load_u32(qs + 8 * g), aux = load_u32(qs + 8 * g + 4);
            const __m256i q = apply_signs(load256(y[i].qs + 32 * g), signs4(aux));
            acc = madd_scaled(acc, grid4(iq::kIq2xxsGrid, idx), q, _mm256_set1_epi16(short(2 * (aux >> 28) + 1)));
        }
        sum += ((half_to_float(x[i].d) * y[i].d) * float(hsum_i32(acc))) * 0.125f;
    }
    *s = sum;
}

void vec_dot_iq2_xs(int64_t n, float* s, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockIQ2_XS*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        __m256i acc = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const uint16_t* q2 = x[i].qs + 4 * g;
            const uint32_t signs = uint32_t(kSigns[q2[0] >> 9]) | uint32_t(kSigns[q2[1] >> 9]) << 8 |
                                   uint32_t(kSigns[q2[2] >> 9]) << 16 | uint32_t(kSigns[q2[3] >> 9]) << 24;
            const __m256i grid = grid4(iq::kIq2xsGrid, q2[0] & 511, q2[1] & 511, q2[2] & 511, q2[3] & 511);
            const __m256i q = apply_signs(load256(y[i].qs + 32 * g), signs);
            const int sc = x[i].scales[g];
            acc = madd_scaled(acc, grid, q, scales2(2 * (sc & 15) + 1, 2 * (sc >> 4) + 1));
        }
        sum += ((half_to_float(x[i].d) * y[i].d) * float(hsum_i32(acc))) * 0.125f;
    }
    *s = sum;
}

void vec_dot_iq2_s(int64_t n, float* s, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockIQ2_S*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const uint8_t* qs = x[i].qs;
        __m256i acc = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const int h = x[i].qh[g];
            const __m256i grid = grid4(iq::kIq2sGrid, qs[4 * g] | ((h << 8) & 0x300), qs[4 * g + 1] | ((h << 6) & 0x300),
                                       qs[4 * g + 2] | ((h << 4) & 0x300), qs[4 * g + 3] | ((h << 2) & 0x300));
            const __m256i q = apply_signs(load256(y[i].qs + 32 * g), load_u32(qs + QK_K / 8 + 4 * g));
            const int sc = x[i].scales[g];
            acc = madd_scaled(acc, grid, q, scales2(2 * (sc & 15) + 1, 2 * (sc >> 4) + 1));
        }
        sum += ((half_to_float(x[i].d) * y[i].d) * float(hsum_i32(acc))) * 0.125f;
    }
    *s = sum;
}

void vec_dot_iq3_xxs(int64_t n, float* s, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockIQ3_XXS*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const uint8_t* qs = x[i].qs;
        __m256i acc = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const uint32_t aux = load_u32(qs + QK_K / 4 + 4 * g);
            int idx[8];
            for (int k = 0; k < 8; ++k) idx[k] = qs[8 * g + k];
            const __m256i q = apply_signs(load256(y[i].qs + 32 * g), signs4(aux));
            acc = madd_scaled(acc, grid8(iq::kIq3xxsGrid, idx), q, _mm256_set1_epi16(short(2 * (aux >> 28) + 1)));
        }
        sum += ((half_to_float(x[i].d) * y[i].d) * float(hsum_i32(acc))) * 0.25f;
    }
    *s = sum;
}

void vec_dot_iq3_s(int64_t n, float* s, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockIQ3_S*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        __m256i acc = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const int h = x[i].qh[g];
            int idx[8];
            for (int k = 0; k < 8; ++k) idx[k] = x[i].qs[8 * g + k] | (((h >> k) & 1) << 8);
            const __m256i q = apply_signs(load256(y[i].qs + 32 * g), load_u32(x[i].signs + 4 * g));
            const int ls = 1 + 2 * ((x[i].scales[g / 2] >> (4 * (g % 2))) & 15);
            acc = madd_scaled(acc, grid8(iq::kIq3sGrid, idx), q, _mm256_set1_epi16(short(ls)));
        }
        sum += (half_to_float(x[i].d) * y[i].d) * float(hsum_i32(acc));
    }
    *s = sum;
}

void vec_dot_iq1_s(int64_t n, float* s, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockIQ1_S*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    const __m256i ones = _mm256_set1_epi8(1);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        __m256i acc = _mm256_setzero_si256();
        int32_t ishift = 0;
        for (int g = 0; g < 8; ++g) {
            const int h = x[i].qh[g];
            const uint8_t* qs = x[i].qs + 4 * g;
            const __m256i grid = grid4(iq::kIq1sGrid, qs[0] | ((h << 8) & 0x700), qs[1] | ((h << 5) & 0x700),
                                       qs[2] | ((h << 2) & 0x700), qs[3] | ((h >> 1) & 0x700));
            // Grid values -1, 0, 1: the product is q with the grid's sign.
            const __m256i p = _mm256_sign_epi8(load256(y[i].qs + 32 * g), grid);
            const int ls = 2 * ((h >> 12) & 7) + 1;
            acc = madd_scaled(acc, ones, p, _mm256_set1_epi16(short(ls)));
            const int32_t qsum = y[i].bsums[2 * g] + y[i].bsums[2 * g + 1];
            ishift += ls * (h & 0x8000 ? -qsum : qsum);
        }
        sum += (half_to_float(x[i].d) * y[i].d) * (float(hsum_i32(acc)) + kIq1Delta * float(ishift));
    }
    *s = sum;
}

void vec_dot_iq1_m(int64_t n, float* s, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockIQ1_M*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    const __m256i ones = _mm256_set1_epi8(1);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        uint16_t sc[4];
        std::memcpy(sc, x[i].scales, sizeof sc);
        const uint16_t dh = (sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000);
        __m256i acc = _mm256_setzero_si256(), acc_shift = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const uint8_t* qs = x[i].qs + 4 * g;
            const int h0 = x[i].qh[2 * g], h1 = x[i].qh[2 * g + 1];
            const __m256i grid = grid4(iq::kIq1sGrid, qs[0] | ((h0 << 8) & 0x700), qs[1] | ((h0 << 4) & 0x700),
                                       qs[2] | ((h1 << 8) & 0x700), qs[3] | ((h1 << 4) & 0x700));
            const int64_t plus = 0x0101010101010101, minus = -1;
            const __m256i shift = _mm256_set_epi64x(h1 & 0x80 ? minus : plus, h1 & 0x08 ? minus : plus,
                                                    h0 & 0x80 ? minus : plus, h0 & 0x08 ? minus : plus);
            const int s0 = (sc[g / 2] >> (6 * (g % 2))) & 7, s1 = (sc[g / 2] >> (6 * (g % 2) + 3)) & 7;
            const __m256i scale = scales2(2 * s0 + 1, 2 * s1 + 1);
            const __m256i q = load256(y[i].qs + 32 * g);
            acc = madd_scaled(acc, ones, _mm256_sign_epi8(q, grid), scale);
            acc_shift = madd_scaled(acc_shift, ones, _mm256_sign_epi8(q, shift), scale);
        }
        sum += (half_to_float(dh) * y[i].d) * (float(hsum_i32(acc)) + kIq1Delta * float(hsum_i32(acc_shift)));
    }
    *s = sum;
}

void vec_dot_iq4_xs(int64_t n, float* s, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockIQ4_XS*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    const __m256i levels = _mm256_broadcastsi128_si256(load128(kIq4nlValues));
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        __m256i acc = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const int ls = (((x[i].scales_l[g / 2] >> (4 * (g % 2))) & 15) | (((x[i].scales_h >> (2 * g)) & 3) << 4)) - 32;
            const __m256i w = _mm256_shuffle_epi8(levels, unpack_nibbles(load128(x[i].qs + 16 * g)));
            const __m256i p = signed_product(w, load256(y[i].qs + 32 * g));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(short(ls))));
        }
        sum += (half_to_float(x[i].d) * y[i].d) * float(hsum_i32(acc));
    }
    *s = sum;
}

void vec_dot_tq1_0(int64_t n, float* s, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockTQ1_0*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    const int16_t kPow3[5] = {1, 3, 9, 27, 81};
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const int8_t* q8 = y[i].qs;
        __m256i acc = _mm256_setzero_si256();
        // Bytes 0-31: value 32 n + m is trit n of byte m.
        const __m256i b_lo = _mm256_cvtepu8_epi16(load128(x[i].qs)), b_hi = _mm256_cvtepu8_epi16(load128(x[i].qs + 16));
        for (int t = 0; t < 5; ++t) {
            const __m256i p = _mm256_set1_epi16(kPow3[t]);
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(trits(b_lo, p), widen(q8 + 32 * t)));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(trits(b_hi, p), widen(q8 + 32 * t + 16)));
        }
        // Bytes 32-47: value 160 + 16 n + m.
        const __m256i b_mid = _mm256_cvtepu8_epi16(load128(x[i].qs + 32));
        for (int t = 0; t < 5; ++t)
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(trits(b_mid, _mm256_set1_epi16(kPow3[t])), widen(q8 + 160 + 16 * t)));
        // qh: value 240 + 4 n + j is trit n of qh[j]; lane 4 n + j.
        const __m256i b_qh = _mm256_cvtepu8_epi16(_mm_set1_epi32(int32_t(load_u32(x[i].qh))));
        const __m256i p_qh = _mm256_setr_epi16(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27);
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(trits(b_qh, p_qh), widen(q8 + 240)));
        // Trits t stand for t - 1.
        const int32_t isum = hsum_i32(acc) - sum_bsums(y[i]);
        sum += (half_to_float(x[i].d) * y[i].d) * float(isum);
    }
    *s = sum;
}

void vec_dot_tq2_0(int64_t n, float* s, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockTQ2_0*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    const __m256i ones = _mm256_set1_epi16(1);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        __m256i acc = _mm256_setzero_si256();
        for (int c = 0; c < 2; ++c) {
            const __m256i b = load256(x[i].qs + 32 * c);
            for (int l = 0; l < 4; ++l)
                acc = madd_scaled(acc, shift_mask(b, 2 * l, 3), load256(y[i].qs + 128 * c + 32 * l), ones);
        }
        const int32_t isum = hsum_i32(acc) - sum_bsums(y[i]);
        sum += (half_to_float(x[i].d) * y[i].d) * float(isum);
    }
    *s = sum;
}

}  // namespace avx2
}  // namespace ggml::cpu
GGML_TARGET_END
#endif
