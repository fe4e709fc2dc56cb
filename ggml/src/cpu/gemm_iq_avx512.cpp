// Tiles of the grid and ternary formats at the AVX-512 level (IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S,
// IQ1_S, IQ1_M, TQ1_0, TQ2_0): each 16-row tile's blocks are read once by the format's reader into unsigned
// levels u = level + kOffset (grid values looked up by index, negated where the sign bit is set) and
// multipliers per group of 16 values, transposed so that a vector holds 4 values of each of the 16 rows, and
// then meet every activation column with vpdpbusd. Per group the exact sum is scale * (sum(u * y) - kOffset *
// sum(y)); per super-block the reference's float term (dx * dy) * isum [* kTermScale] is added in order: bit
// for bit the reference's.
//
// With up to 4 columns the transposes would cost more than they save: the same readers give a super-block
// at a time in registers, once for all the columns (decode_grid_rows).
#include "kernels_x86_intrin.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"
#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX512_BEGIN
#include "kernels_x86_avx512.h"
#include "kernels_x86_gemm.h"

namespace ggml::cpu {
namespace {

constexpr int kRows = 16;
constexpr int kColumns = 4;  // columns whose sums stay in registers

// Each format's reader (ReadIQ3S ... ReadTQ2, below) gives a super-block in registers: read(block, u) puts
// values 64m .. 64m + 63 in u[m] as unsigned u = level + kOffset and returns the multipliers of the 16
// groups of 16 values; kTermScale is the reference's factor after (dx * dy) * isum, kScalePer32 says both
// halves of each 32 values share a multiplier. The tile engine and the few-column kernel both use it.

// The block's float scale: its fp16 d, or what the reader computes (IQ1_M has no d field).
template <class U>
inline float block_scale(const typename U::Block& b) {
    if constexpr (requires { U::scale(b); })
        return U::scale(b);
    else
        return half_to_float(b.d);
}

// sum + ((dx * dy) * isum) [* kTermScale], the reference's float steps.
template <class U>
inline __m512 add_term(__m512 acc, __m512 dx, __m512 dy, __m512i isum) {
    __m512 t = _mm512_mul_ps(_mm512_mul_ps(dx, dy), _mm512_cvtepi32_ps(isum));
    if constexpr (U::kTermScale != 1.0f) t = _mm512_mul_ps(t, _mm512_set1_ps(U::kTermScale));
    return _mm512_add_ps(acc, t);
}

// One super-block of 16 rows, unpacked: w[8 * k + j] lane r = u of values 32k + 4j .. + 3 of row r;
// scale[h] lane r = the multiplier of values 16h .. 16h + 15; dx lane r = the block's d.
struct alignas(64) TileIQ {
    __m512i w[64];
    __m512i scale[16];
    __m512 dx;
};

template <class R>
void unpack_tile(const typename R::Block* const rows[kRows], int64_t i, TileIQ& out) {
    alignas(64) uint8_t u[kRows][256];
    alignas(64) int32_t scales[kRows][16];
    alignas(64) float d[kRows];
    for (int t = 0; t < kRows; ++t) {
        __m512i v[4];
        _mm512_store_si512(scales[t], R::read(rows[t][i], v));
        for (int m = 0; m < 4; ++m) _mm512_store_si512(u[t] + 64 * m, v[m]);
        d[t] = block_scale<R>(rows[t][i]);
    }
    for (int k = 0; k < 8; ++k) {
        __m256i in[kRows];
        for (int t = 0; t < kRows; ++t) in[t] = load256(u[t] + 32 * k);
        transpose16x8_i32(in, out.w + 8 * k);
    }
    for (int h = 0; h < 16; ++h) {
        alignas(64) int32_t lane[kRows];
        for (int t = 0; t < kRows; ++t) lane[t] = scales[t][h];
        out.scale[h] = _mm512_load_si512(lane);
    }
    out.dx = _mm512_load_ps(d);
}

template <class R>
void gemm_unpacked(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                   int nr, int nc) {
    using Block = typename R::Block;
    const int64_t nb = n / QK_K;
    thread_local std::vector<TileIQ> tiles;
    tiles.resize(size_t(nb));
    for (int r0 = 0; r0 < nr; r0 += kRows) {
        const Block* rows[kRows];
        tile_rows<Block, kRows>(rows, x, bx, r0, nr);
        for (int64_t i = 0; i < nb; ++i) unpack_tile<R>(rows, i, tiles[size_t(i)]);
        const __mmask16 mask = __mmask16((1u << std::min(kRows, nr - r0)) - 1);
        for (int c0 = 0; c0 < nc; c0 += kColumns) {
            const int cn = std::min(kColumns, nc - c0);
            __m512 acc[kColumns];
            for (int c = 0; c < cn; ++c) acc[c] = _mm512_setzero_ps();
            for (int64_t i = 0; i < nb; ++i) {
                const TileIQ& tile = tiles[size_t(i)];
                for (int c = 0; c < cn; ++c) {
                    const BlockQ8_K& a = q8k_block(y, by, c0 + c, i);
                    // Values 16h .. 16h + 15 are vectors 4h .. 4h + 3; formats with one scale per 32 values
                    // take both halves at once.
                    constexpr int kSpan = R::kScalePer32 ? 2 : 1;
                    __m512i isum = _mm512_setzero_si512();
                    for (int h = 0; h < 16; h += kSpan) {
                        const int bsum = kSpan == 2 ? a.bsums[h] + a.bsums[h + 1] : a.bsums[h];
                        __m512i p = _mm512_set1_epi32(-R::kOffset * bsum);
                        for (int j = 0; j < 4 * kSpan; ++j)
                            p = _mm512_dpbusd_epi32(p, tile.w[4 * h + j],
                                                    _mm512_set1_epi32(load_i32(a.qs + 16 * h + 4 * j)));
                        isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(tile.scale[h], p));
                    }
                    acc[c] = add_term<R>(acc[c], tile.dx, _mm512_set1_ps(a.d), isum);
                }
            }
            for (int c = 0; c < cn; ++c) _mm512_mask_storeu_ps(s + size_t(c0 + c) * ldc + r0, mask, acc[c]);
        }
    }
}

// A few columns of the grid and ternary formats: a super-block at a time, in registers. A reader gives
// each 64 values as unsigned u = level + kOffset (grid entries loaded by index: AVX-512 gathers of 8-byte
// entries were slower on Zen 4 than scalar loads, of IQ3_S's 4-byte ones faster) and the multipliers of the
// 16 groups of 16 values; the values meet the activation with vpdpbusd, lanes are multiplied by their group's
// multiplier, and kOffset times the multiplied bsums is taken off: the reference's isum, then its float term.

// Entries of 8 values: e[k] indexes qword k of the result.
template <class Index>
inline __m512i grid8x8(const uint64_t* grid, const Index* e) {
    return _mm512_set_epi64(int64_t(grid[e[7]]), int64_t(grid[e[6]]), int64_t(grid[e[5]]),
                            int64_t(grid[e[4]]), int64_t(grid[e[3]]), int64_t(grid[e[2]]),
                            int64_t(grid[e[1]]), int64_t(grid[e[0]]));
}

// Entries of 4 values: e[k] indexes dword k of the result.
template <class Index>
inline __m512i grid4x16(const uint32_t* grid, const Index* e) {
    __m128i q[4];
    for (int k = 0; k < 4; ++k)
        q[k] = _mm_set_epi32(int(grid[e[4 * k + 3]]), int(grid[e[4 * k + 2]]), int(grid[e[4 * k + 1]]),
                             int(grid[e[4 * k]]));
    return _mm512_inserti32x4(
        _mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(q[0]), q[1], 1), q[2], 2), q[3], 3);
}

// The 32 entry indices of a super-block, computed in 16-bit lanes: the low byte of entry k or'ed with
// bits of word which[k] of `high`, shifted right then left and masked (IQ1: bits 8-10, IQ2_S: 8-9).
struct alignas(64) Indices32 {
    uint16_t v[32];
};
struct alignas(64) Words32 {
    int16_t v[32];
};
template <class F>
constexpr Words32 words32(F f) {
    Words32 r{};
    for (int k = 0; k < 32; ++k) r.v[k] = int16_t(f(k));
    return r;
}
inline void entry_indices(Indices32& out, __m512i low, __m512i high, const Words32& which,
                          const Words32& right, const Words32& left, int mask) {
    const __m512i h =
        _mm512_sllv_epi16(_mm512_srlv_epi16(_mm512_permutexvar_epi16(_mm512_load_si512(which.v), high),
                                            _mm512_load_si512(right.v)),
                          _mm512_load_si512(left.v));
    _mm512_store_si512(out.v, _mm512_or_si512(low, _mm512_and_si512(h, _mm512_set1_epi16(int16_t(mask)))));
}
inline __m512i widen_bytes(const uint8_t* p, int n) {  // n = 8, 16 or 32 bytes to 16-bit lanes
    const __m256i v = n == 32 ? load256(p)
                      : n == 16
                          ? _mm256_castsi128_si256(load128(p))
                          : _mm256_castsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    return _mm512_cvtepu8_epi16(v);
}

// u = offset + magnitude, or offset - magnitude where the value's bit of `negative` is set.
inline __m512i signed_levels(__m512i magnitudes, uint64_t negative, int offset) {
    const __m512i off = _mm512_set1_epi8(char(offset));
    return _mm512_mask_sub_epi8(_mm512_add_epi8(off, magnitudes), __mmask64(negative), off, magnitudes);
}

// 7-bit sign groups (in the low bits of each 16-bit lane, or of each 32-bit lane: its high half is zero)
// with their eighth bit, the parity.
inline __m512i with_parity(__m512i f) {
    __m512i p = _mm512_xor_si512(f, _mm512_srli_epi16(f, 4));
    p = _mm512_xor_si512(p, _mm512_srli_epi16(p, 2));
    p = _mm512_xor_si512(p, _mm512_srli_epi16(p, 1));
    return _mm512_or_si512(f, _mm512_slli_epi16(_mm512_and_si512(p, _mm512_set1_epi16(1)), 7));
}

// Multipliers of 8 groups of 32 values (lanes 0-7) as those of the 16 groups of 16.
inline __m512i per16_of_per32(__m512i eight) {
    return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7), eight);
}

// IQ2_XXS and IQ3_XXS: the 8 words after (IQ2_XXS: between) the indices of the groups of 32 values hold
// four 7-bit sign groups each and the scale in bits 28-31. negative[m]: the signs of values 64m .. + 63.
inline __m512i xxs_signs_and_scales(__m256i aux, uint64_t negative[4]) {
    const __m512i field = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i shift = _mm512_setr_epi32(0, 7, 14, 21, 0, 7, 14, 21, 0, 7, 14, 21, 0, 7, 14, 21);
    for (int h = 0; h < 2; ++h) {  // groups 4h .. 4h + 3: field l of group 4h + k at byte 4k + l
        const __m512i words = _mm512_permutexvar_epi32(_mm512_add_epi32(field, _mm512_set1_epi32(4 * h)),
                                                       _mm512_castsi256_si512(aux));
        const __m128i bytes = _mm512_cvtepi32_epi8(
            with_parity(_mm512_and_si512(_mm512_srlv_epi32(words, shift), _mm512_set1_epi32(127))));
        negative[2 * h] = uint64_t(_mm_cvtsi128_si64(bytes));
        negative[2 * h + 1] = uint64_t(_mm_extract_epi64(bytes, 1));
    }
    const __m512i scale8 = _mm512_castsi256_si512(
        _mm256_add_epi32(_mm256_slli_epi32(_mm256_srli_epi32(aux, 28), 1), _mm256_set1_epi32(1)));
    return per16_of_per32(scale8);
}

// IQ2_XS and IQ2_S: scales[g] holds the 4-bit scales of values 32g .. + 15 (low nibble) and + 16 .. + 31.
inline __m512i nibble_pair_multipliers(const uint8_t scales[8]) {
    const __m128i w = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales)));
    const __m128i pairs =
        _mm_or_si128(_mm_and_si128(w, _mm_set1_epi16(15)), _mm_slli_epi16(_mm_srli_epi16(w, 4), 8));
    const __m512i s = _mm512_cvtepu8_epi32(pairs);  // byte 2g: low nibble, 2g + 1: high
    return _mm512_add_epi32(_mm512_slli_epi32(s, 1), _mm512_set1_epi32(1));
}

struct ReadIQ2XXS {
    using Block = BlockIQ2_XXS;
    static constexpr int kOffset = 64;
    static constexpr float kTermScale = 0.125f;
    static constexpr bool kScalePer32 = true;
    static __m512i read(const BlockIQ2_XXS& b, __m512i u[4]) {
        const __m512i words = _mm512_loadu_si512(b.qs);  // group g: index word 2g, sign/scale word 2g + 1
        const __m256i aux = _mm512_castsi512_si256(_mm512_permutexvar_epi32(
            _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 0, 0, 0, 0, 0, 0, 0, 0), words));
        uint64_t negative[4];
        const __m512i scale16 = xxs_signs_and_scales(aux, negative);
        const auto* ib = reinterpret_cast<const uint8_t*>(b.qs);  // entry l of group g: byte 8g + l
        for (int m = 0; m < 4; ++m) {
            const uint8_t* e = ib + 16 * m;
            const int idx[8] = {e[0], e[1], e[2], e[3], e[8], e[9], e[10], e[11]};
            u[m] = signed_levels(grid8x8(iq::kIq2xxsGrid.v, idx), negative[m], kOffset);
        }
        return scale16;
    }
};

struct ReadIQ3XXS {
    using Block = BlockIQ3_XXS;
    static constexpr int kOffset = 64;
    static constexpr float kTermScale = 0.25f;
    static constexpr bool kScalePer32 = true;
    static __m512i read(const BlockIQ3_XXS& b, __m512i u[4]) {
        uint64_t negative[4];
        const __m512i scale16 = xxs_signs_and_scales(load256(b.qs + 64), negative);
        for (int m = 0; m < 4; ++m)
            u[m] = signed_levels(grid4x16(iq::kIq3xxsGrid.v, b.qs + 16 * m), negative[m], kOffset);
        return scale16;
    }
};

// IQ3_S: 9-bit indices (qs[e], bit e % 8 of qh[e / 8]) of 4-value entries, one sign bit per value, a 4-bit
// scale per 32 values (scales[k / 2] >> 4 (k % 2)).
struct ReadIQ3S {
    using Block = BlockIQ3_S;
    static constexpr int kOffset = 16;
    static constexpr float kTermScale = 1.0f;
    static constexpr bool kScalePer32 = true;
    static __m512i read(const BlockIQ3_S& b, __m512i u[4]) {
        static constexpr Words32 kWhich = words32([](int e) { return e / 8; });
        static constexpr Words32 kRight = words32([](int e) { return e % 8; });
        static constexpr Words32 kLeft = words32([](int) { return 8; });
        Indices32 idx[2];
        for (int h = 0; h < 2; ++h)
            entry_indices(idx[h], widen_bytes(b.qs + 32 * h, 32), widen_bytes(b.qh + 4 * h, 8), kWhich,
                          kRight, kLeft, 0x100);
        uint64_t negative[4];
        std::memcpy(negative, b.signs, sizeof negative);
        for (int m = 0; m < 4; ++m)
            u[m] = signed_levels(
                _mm512_i32gather_epi32(_mm512_cvtepu16_epi32(load256(idx[m / 2].v + 16 * (m % 2))),
                                       reinterpret_cast<const int*>(iq::kIq3sGrid.v), 4),
                negative[m], kOffset);
        const __m128i bytes = _mm_cvtsi32_si128(load_i32(b.scales));
        const __m128i m4 = _mm_set1_epi8(0x0f);
        const __m128i nibbles =
            _mm_unpacklo_epi8(_mm_and_si128(bytes, m4), _mm_and_si128(_mm_srli_epi16(bytes, 4), m4));
        const __m512i scale8 =
            _mm512_add_epi32(_mm512_slli_epi32(_mm512_cvtepu8_epi32(nibbles), 1), _mm512_set1_epi32(1));
        return per16_of_per32(scale8);
    }
};

// IQ2_XS: qs[e] = a 9-bit index and 7 sign bits (the eighth their parity).
struct ReadIQ2XS {
    using Block = BlockIQ2_XS;
    static constexpr int kOffset = 64;
    static constexpr float kTermScale = 0.125f;
    static constexpr bool kScalePer32 = false;
    static __m512i read(const BlockIQ2_XS& b, __m512i u[4]) {
        const __m256i signs =
            _mm512_cvtepi16_epi8(with_parity(_mm512_srli_epi16(_mm512_loadu_si512(b.qs), 9)));
        Indices32 idx;
        _mm512_store_si512(idx.v, _mm512_and_si512(_mm512_loadu_si512(b.qs), _mm512_set1_epi16(511)));
        alignas(32) uint64_t negative[4];
        _mm256_store_si256(reinterpret_cast<__m256i*>(negative), signs);
        for (int m = 0; m < 4; ++m) {
            u[m] = signed_levels(grid8x8(iq::kIq2xsGrid.v, idx.v + 8 * m), negative[m], kOffset);
        }
        return nibble_pair_multipliers(b.scales);
    }
};

// IQ2_S: 10-bit indices (qs[e], the top 2 bits of group g's entry l in qh[g] bits 2l, 2l + 1), one sign byte
// per entry (qs[32 + e]).
struct ReadIQ2S {
    using Block = BlockIQ2_S;
    static constexpr int kOffset = 64;
    static constexpr float kTermScale = 0.125f;
    static constexpr bool kScalePer32 = false;
    static __m512i read(const BlockIQ2_S& b, __m512i u[4]) {
        static constexpr Words32 kWhich = words32([](int e) { return e / 4; });
        static constexpr Words32 kLeft = words32([](int e) { return 8 - 2 * (e % 4); });
        static constexpr Words32 kRight = words32([](int) { return 0; });
        Indices32 idx;
        entry_indices(idx, widen_bytes(b.qs, 32), widen_bytes(b.qh, 8), kWhich, kRight, kLeft, 0x300);
        for (int m = 0; m < 4; ++m) {
            uint64_t negative;
            std::memcpy(&negative, b.qs + 32 + 8 * m, sizeof negative);
            u[m] = signed_levels(grid8x8(iq::kIq2sGrid.v, idx.v + 8 * m), negative, kOffset);
        }
        return nibble_pair_multipliers(b.scales);
    }
};

// 8 * grid for the {-1, 0, 1} bytes of IQ1's entries (shifted per 16-bit lane, the low byte's spill masked).
inline __m512i times8(__m512i g) {
    return _mm512_and_si512(_mm512_slli_epi16(g, 3), _mm512_set1_epi8(char(0xf8)));
}

// IQ1_S: group g of 32 values is 4 kIq1sGrid entries (11-bit indices: qs[4g + l] and bits 3l .. 3l + 2 of
// qh[g]) with the scale 2 s + 1 (qh[g] bits 12-14) and the sign of the group's shift of 1/8 (bit 15). The
// reference's (dx * dy) * (isum + ishift / 8) is ((dx * dy) * (8 isum + ishift)) / 8 bit for bit (8 isum +
// ishift is an integer under 2^24, and the scalings by 8 are exact): u = 8 * grid + 9 +- 1 per value.
struct ReadIQ1S {
    using Block = BlockIQ1_S;
    static constexpr int kOffset = 9;
    static constexpr float kTermScale = 0.125f;
    static constexpr bool kScalePer32 = true;
    static __m512i read(const BlockIQ1_S& b, __m512i u[4]) {
        // Entry k = 4g + l: qs[k], bits 3l .. 3l + 2 of qh[g] as bits 8-10.
        static constexpr Words32 kWhich = words32([](int k) { return k / 4; });
        static constexpr Words32 kLeft = words32([](int) { return 8; });
        static constexpr Words32 kRight = words32([](int k) { return 3 * (k % 4); });
        Indices32 idx;
        entry_indices(idx, widen_bytes(b.qs, 32), _mm512_castsi128_si512(load128(b.qh)), kWhich, kRight,
                      kLeft, 0x700);
        for (int m = 0; m < 4; ++m) {
            const int bias0 = kOffset + (b.qh[2 * m] & 0x8000 ? -1 : 1);
            const int bias1 = kOffset + (b.qh[2 * m + 1] & 0x8000 ? -1 : 1);
            const __m512i bias =
                _mm512_inserti64x4(_mm512_set1_epi8(char(bias0)), _mm256_set1_epi8(char(bias1)), 1);
            u[m] = _mm512_add_epi8(times8(grid8x8(iq::kIq1sGrid.v, idx.v + 8 * m)), bias);
        }
        const __m512i q = _mm512_castsi256_si512(_mm256_cvtepu16_epi32(load128(b.qh)));
        const __m512i ls = _mm512_add_epi32(
            _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(q, 12), _mm512_set1_epi32(7)), 1),
            _mm512_set1_epi32(1));
        return per16_of_per32(ls);
    }
};

// IQ1_M: a shift sign per entry (qh bits 3 and 7: entry k of values 64m .. + 63 at bit 4k + 3 of the word
// qh[4m .. 4m + 3]) and a 3-bit scale per 16 values.
struct ReadIQ1M {
    using Block = BlockIQ1_M;
    static constexpr int kOffset = 9;
    static constexpr float kTermScale = 0.125f;
    static constexpr bool kScalePer32 = false;
    // The block's fp16 scale: the top nibbles of the four scale words.
    static float scale(const Block& b) {
        uint16_t sc[4];
        std::memcpy(sc, b.scales, sizeof sc);
        return half_to_float(
            uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000)));
    }
    static __m512i read(const BlockIQ1_M& b, __m512i u[4]) {
        // Entry k: qs[k], bits 4 (k % 2) .. + 2 of qh[k / 2] as bits 8-10.
        static constexpr Words32 kWhich = words32([](int k) { return k / 2; });
        static constexpr Words32 kLeft = words32([](int) { return 8; });
        static constexpr Words32 kRight = words32([](int k) { return 4 * (k % 2); });
        Indices32 idx;
        entry_indices(idx, widen_bytes(b.qs, 32), widen_bytes(b.qh, 16), kWhich, kRight, kLeft, 0x700);
        for (int m = 0; m < 4; ++m) {
            uint32_t high;
            std::memcpy(&high, b.qh + 4 * m, sizeof high);
            const uint64_t negative = _pdep_u64(_pext_u32(high, 0x88888888u), 0x0101010101010101ull) * 0xff;
            const __m512i up = _mm512_add_epi8(times8(grid8x8(iq::kIq1sGrid.v, idx.v + 8 * m)),
                                               _mm512_set1_epi8(kOffset + 1));
            u[m] = _mm512_mask_sub_epi8(up, __mmask64(negative), up, _mm512_set1_epi8(2));
        }
        // Multiplier h: 2 * (bits 3 (h % 4) .. + 2 of scale word h / 4) + 1, in registers (16 scalar stores
        // read back as one vector stalled on store forwarding).
        const __m256i words =
            _mm256_castsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.scales)));
        const __m256i spread = _mm256_permutexvar_epi16(
            _mm256_setr_epi16(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3), words);
        const __m256i s3 = _mm256_and_si256(
            _mm256_srlv_epi16(spread, _mm256_setr_epi16(0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9)),
            _mm256_set1_epi16(7));
        return _mm512_add_epi32(_mm512_slli_epi32(_mm512_cvtepu16_epi32(s3), 1), _mm512_set1_epi32(1));
    }
};

// TQ1_0: trit n of a byte q is (uint8(q * 3^n) * 3) >> 8, computed in 16-bit lanes as the high half of
// (q * 3^n * 256 mod 2^16) * 3; bytes 0-31 hold values 32n + m, bytes 32-47 values 160 + 16n + m, qh[j]
// values 240 + 4n + j. u = the trit (0-2), the level u - 1.
struct ReadTQ1 {
    using Block = BlockTQ1_0;
    static constexpr int kOffset = 1;
    static constexpr float kTermScale = 1.0f;
    static constexpr bool kScalePer32 = true;
    static constexpr int16_t kPow[5] = {1 << 8, 3 << 8, 9 << 8, 27 << 8, 81 << 8};  // 3^n * 256
    static __m256i trits32(__m512i words, __m512i pow) {  // 32 bytes from 32 widened bytes
        return _mm512_cvtepi16_epi8(_mm512_mulhi_epu16(_mm512_mullo_epi16(words, pow), _mm512_set1_epi16(3)));
    }
    static __m512i join(__m256i lo, __m256i hi) {
        return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
    static __m256i join(__m128i lo, __m128i hi) {
        return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    }
    static __m128i trits16(__m256i words, __m256i pow) {  // 16 bytes from 16 widened bytes
        return _mm256_cvtepi16_epi8(_mm256_mulhi_epu16(_mm256_mullo_epi16(words, pow), _mm256_set1_epi16(3)));
    }
    static __m512i read(const BlockTQ1_0& b, __m512i u[4]) {
        const __m512i w0 = _mm512_cvtepu8_epi16(load256(b.qs));
        __m256i t0[5];
        for (int n = 0; n < 5; ++n) t0[n] = trits32(w0, _mm512_set1_epi16(kPow[n]));
        const __m256i w1 = _mm256_cvtepu8_epi16(load128(b.qs + 32));
        __m128i t1[5];
        for (int n = 0; n < 5; ++n) t1[n] = trits16(w1, _mm256_set1_epi16(kPow[n]));
        // qh: lane 4n + j holds qh[j], times 3^n.
        uint32_t high;
        std::memcpy(&high, b.qh, sizeof high);
        const __m128i tq = trits16(
            _mm256_cvtepu8_epi16(_mm_set1_epi32(int(high))),
            _mm256_setr_epi16(kPow[0], kPow[0], kPow[0], kPow[0], kPow[1], kPow[1], kPow[1], kPow[1], kPow[2],
                              kPow[2], kPow[2], kPow[2], kPow[3], kPow[3], kPow[3], kPow[3]));
        u[0] = join(t0[0], t0[1]);
        u[1] = join(t0[2], t0[3]);
        u[2] = join(t0[4], join(t1[0], t1[1]));
        u[3] = join(join(t1[2], t1[3]), join(t1[4], tq));
        return _mm512_set1_epi32(1);
    }
};

// TQ2_0: value 128c + 32l + m in bits 2l of qs[32c + m]; u = those 2 bits, the level u - 1.
struct ReadTQ2 {
    using Block = BlockTQ2_0;
    static constexpr int kOffset = 1;
    static constexpr float kTermScale = 1.0f;
    static constexpr bool kScalePer32 = true;
    static __m512i read(const BlockTQ2_0& b, __m512i u[4]) {
        // Lanes of the low half shift by 2 * (2h), of the high half by 2 * (2h + 1).
        for (int c = 0; c < 2; ++c) {
            const __m512i q = _mm512_broadcast_i64x4(load256(b.qs + 32 * c));
            for (int h = 0; h < 2; ++h) {
                const __m512i shift = _mm512_inserti64x4(_mm512_set1_epi16(int16_t(4 * h)),
                                                         _mm256_set1_epi16(int16_t(4 * h + 2)), 1);
                u[2 * c + h] = _mm512_and_si512(_mm512_srlv_epi16(q, shift), _mm512_set1_epi8(3));
            }
        }
        return _mm512_set1_epi32(1);
    }
};

template <class R, int kCols>
inline void grid_row(const typename R::Block* x, const BlockQ8_K* const y[kCols], int64_t nb,
                     const uint8_t* end, float* out) {
    const __m512i group_of = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    float sum[kCols] = {};
    for (int64_t i = 0; i < nb; ++i) {
        const auto& b = x[i];
        prefetch_ahead(reinterpret_cast<const uint8_t*>(&b), sizeof b, end);
        __m512i u[4], sc[4];
        const __m512i scale16 = R::read(b, u);
        for (int m = 0; m < 4; ++m)
            sc[m] = _mm512_permutexvar_epi32(_mm512_add_epi32(group_of, _mm512_set1_epi32(4 * m)), scale16);
        const float dx = block_scale<R>(b);
        for (int col = 0; col < kCols; ++col) {
            const BlockQ8_K& a = y[col][i];
            __m512i acc = _mm512_mullo_epi32(
                scale16,
                _mm512_mullo_epi32(_mm512_cvtepi16_epi32(load256(a.bsums)), _mm512_set1_epi32(-R::kOffset)));
            for (int m = 0; m < 4; ++m) {
                const __m512i d =
                    _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[m], _mm512_loadu_si512(a.qs + 64 * m));
                acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(sc[m], d));
            }
            const __m128 t = _mm_mul_ss(_mm_mul_ss(_mm_set_ss(dx), _mm_set_ss(a.d)),
                                        _mm_set_ss(float(_mm512_reduce_add_epi32(acc))));
            sum[col] =
                _mm_cvtss_f32(_mm_add_ss(_mm_set_ss(sum[col]), _mm_mul_ss(t, _mm_set_ss(R::kTermScale))));
        }
    }
    for (int col = 0; col < kCols; ++col) out[col] = sum[col];
}

template <class R, int kCols>
void decode_grid_rows(int64_t n, float* s, size_t ldc, const void* vx, size_t bx, const void* vy, size_t by,
                      int nr) {
    using Block = typename R::Block;
    const BlockQ8_K* y[kCols];
    for (int col = 0; col < kCols; ++col)
        y[col] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(vy) + size_t(col) * by);
    const auto* x = static_cast<const uint8_t*>(vx);
    const uint8_t* end = x + size_t(nr) * bx;
    for (int r = 0; r < nr; ++r) {
        float out[kCols];
        grid_row<R, kCols>(reinterpret_cast<const Block*>(x + size_t(r) * bx), y, n / QK_K, end, out);
        for (int col = 0; col < kCols; ++col) s[size_t(col) * ldc + size_t(r)] = out[col];
    }
}

// 1 to kMaxGridDecodeColumns columns (a decode step of a few streams, a short draft): each super-block read
// once for all of them; more go to the tile engine.
constexpr int kMaxGridDecodeColumns = 4;
template <class R>
void decode_grid_columns(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                         int nr, int nc) {
    switch (nc) {
        case 1:
            return decode_grid_rows<R, 1>(n, s, ldc, x, bx, y, by, nr);
        case 2:
            return decode_grid_rows<R, 2>(n, s, ldc, x, bx, y, by, nr);
        case 3:
            return decode_grid_rows<R, 3>(n, s, ldc, x, bx, y, by, nr);
        default:
            return decode_grid_rows<R, 4>(n, s, ldc, x, bx, y, by, nr);
    }
}

}  // namespace

namespace avx512 {
// With up to kMaxGridDecodeColumns columns each super-block is read once for all of them (a reader per type).
#define GGML_GEMM_UNPACKED_OR_DECODE(name, reader)                                                        \
    void gemm_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, \
                     int nr, int nc) {                                                                    \
        if (nc <= kMaxGridDecodeColumns)                                                                  \
            return decode_grid_columns<reader>(n, s, ldc, x, bx, y, by, nr, nc);                          \
        gemm_unpacked<reader>(n, s, ldc, x, bx, y, by, nr, nc);                                           \
    }
GGML_GEMM_UNPACKED_OR_DECODE(iq3_s, ReadIQ3S)
GGML_GEMM_UNPACKED_OR_DECODE(iq3_xxs, ReadIQ3XXS)
GGML_GEMM_UNPACKED_OR_DECODE(iq2_xxs, ReadIQ2XXS)
GGML_GEMM_UNPACKED_OR_DECODE(iq2_xs, ReadIQ2XS)
GGML_GEMM_UNPACKED_OR_DECODE(iq2_s, ReadIQ2S)
GGML_GEMM_UNPACKED_OR_DECODE(iq1_s, ReadIQ1S)
GGML_GEMM_UNPACKED_OR_DECODE(iq1_m, ReadIQ1M)
GGML_GEMM_UNPACKED_OR_DECODE(tq1_0, ReadTQ1)
GGML_GEMM_UNPACKED_OR_DECODE(tq2_0, ReadTQ2)
#undef GGML_GEMM_UNPACKED_OR_DECODE
}  // namespace avx512

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
