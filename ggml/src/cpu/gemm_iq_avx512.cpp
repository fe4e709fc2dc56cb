// Tiles of the grid and ternary formats at the AVX-512 level (IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S,
// IQ1_S, IQ1_M, TQ1_0, TQ2_0): each 16-row
// tile's blocks are unpacked once into unsigned levels u = level + kOffset (grid values looked up by
// index, negated where the sign bit is set) and multipliers per group of 16 values, transposed so that a
// vector holds 4 values of each of the 16 rows, and then meet every activation column with vpdpbusd. Per
// group the exact sum is scale * (sum(u * y) - kOffset * sum(y)); per super-block the reference's float
// term (dx * dy) * isum [* kTermScale] is added in order: bit for bit the reference's.
//
// With 2 or 3 columns the unpacking would cost more than it saves: the dot product per output. With one,
// IQ3_S unpacks each row as it streams; the others use the dot product per output too.
#include "kernels_x86_intrin.h"

#include <algorithm>
#include <array>
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
constexpr int kMinColumns = 4;

// The 8 sign bits of each 7-bit sign group (iq::signs_of), looked up.
constexpr auto kSignsOf = [] {
    std::array<uint8_t, 128> t{};
    for (uint32_t i = 0; i < 128; ++i) t[i] = iq::signs_of(i);
    return t;
}();

// Values 8e .. 8e + 7 (grid entry e of 8 values) with their signs, as u = level + offset.
inline void put_entry8(uint8_t* u, uint64_t grid, uint8_t negative, int offset) {
    const __m128i g = _mm_cvtsi64_si128(int64_t(grid)), off = _mm_set1_epi8(char(offset));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(u),
                     _mm_mask_sub_epi8(_mm_add_epi8(off, g), __mmask16(negative), off, g));
}

// Values 64m .. 64m + 63 as 16 grid entries of 4 values (`grid` looked up at idx), negated where `negative`
// has their bit, stored as u = level + offset.
inline void put_entries4x16(uint8_t* u, const uint32_t* grid, __m512i idx, uint64_t negative, int offset) {
    const __m512i off = _mm512_set1_epi8(char(offset));
    const __m512i g = _mm512_i32gather_epi32(idx, reinterpret_cast<const int*>(grid), 4);
    _mm512_storeu_si512(u, _mm512_mask_sub_epi8(_mm512_add_epi8(off, g), __mmask64(negative), off, g));
}

// IQ2_XS and IQ2_S: scales[g] holds the 4-bit scales of values 0-15 (low nibble) and 16-31 of group g.
inline void nibble_pair_scales(const uint8_t scales[8], int32_t scale16[16]) {
    for (int g = 0; g < 8; ++g) {
        scale16[2 * g] = 2 * (scales[g] & 0xf) + 1;
        scale16[2 * g + 1] = 2 * (scales[g] >> 4) + 1;
    }
}

// Each unpacker: Block, kOffset (above every level), kTermScale (the reference's factor after (dx * dy) *
// isum), kScalePer32 (both halves of each 32 values share a multiplier), and unpack(block, u[256] in value
// order, multipliers of the 16 groups of 16).
struct UnpackIQ3S {
    using Block = BlockIQ3_S;
    static constexpr int kOffset = 16;
    static constexpr float kTermScale = 1.0f;
    static constexpr bool kScalePer32 = true;
    static void unpack(const Block& b, uint8_t u[256], int32_t scale16[16]) {
        const __m512i bit_of = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        for (int m = 0; m < 4; ++m) {
            // Entries 16m .. 16m + 15: index qs[e] | (bit e % 8 of qh[e / 8]) << 8; bit v of the signs is
            // value v's.
            uint16_t high;
            std::memcpy(&high, b.qh + 2 * m, sizeof high);
            const __m512i hi_bits =
                _mm512_and_si512(_mm512_srlv_epi32(_mm512_set1_epi32(high), bit_of), _mm512_set1_epi32(1));
            const __m512i idx =
                _mm512_or_si512(_mm512_cvtepu8_epi32(load128(b.qs + 16 * m)), _mm512_slli_epi32(hi_bits, 8));
            uint64_t neg;
            std::memcpy(&neg, b.signs + 8 * m, sizeof neg);
            put_entries4x16(u + 64 * m, iq::kIq3sGrid.v, idx, neg, kOffset);
        }
        for (int k = 0; k < 8; ++k)
            scale16[2 * k] = scale16[2 * k + 1] = 1 + 2 * ((b.scales[k / 2] >> (4 * (k % 2))) & 0xf);
    }
};

// IQ3_XXS: qs[8g + k] indexes kIq3xxsGrid (4 values); the group's uint32 after the 64 indices holds four
// 7-bit sign groups (8 values each) and the scale in bits 28-31.
struct UnpackIQ3XXS {
    using Block = BlockIQ3_XXS;
    static constexpr int kOffset = 64;
    static constexpr float kTermScale = 0.25f;
    static constexpr bool kScalePer32 = true;
    static void unpack(const Block& b, uint8_t u[256], int32_t scale16[16]) {
        for (int m = 0; m < 4; ++m) {
            uint64_t neg = 0;
            for (int h = 0; h < 2; ++h) {  // groups 2m and 2m + 1
                uint32_t aux;
                std::memcpy(&aux, b.qs + 64 + 4 * (2 * m + h), sizeof aux);
                for (int l = 0; l < 4; ++l)
                    neg |= uint64_t(kSignsOf[(aux >> (7 * l)) & 127]) << (32 * h + 8 * l);
                scale16[2 * (2 * m + h)] = scale16[2 * (2 * m + h) + 1] = int32_t(2 * (aux >> 28) + 1);
            }
            put_entries4x16(u + 64 * m, iq::kIq3xxsGrid.v, _mm512_cvtepu8_epi32(load128(b.qs + 16 * m)), neg,
                            kOffset);
        }
    }
};

// IQ2_XXS: per group, a uint32 of 4 kIq2xxsGrid indices (8 values each) and a uint32 of four 7-bit sign
// groups and the scale in bits 28-31.
struct UnpackIQ2XXS {
    using Block = BlockIQ2_XXS;
    static constexpr int kOffset = 64;
    static constexpr float kTermScale = 0.125f;
    static constexpr bool kScalePer32 = true;
    static void unpack(const Block& b, uint8_t u[256], int32_t scale16[16]) {
        for (int g = 0; g < 8; ++g) {
            uint32_t idx, aux;
            std::memcpy(&idx, b.qs + 4 * g, sizeof idx);
            std::memcpy(&aux, b.qs + 4 * g + 2, sizeof aux);
            for (int l = 0; l < 4; ++l)
                put_entry8(u + 32 * g + 8 * l, iq::kIq2xxsGrid[(idx >> (8 * l)) & 255],
                           kSignsOf[(aux >> (7 * l)) & 127], kOffset);
            scale16[2 * g] = scale16[2 * g + 1] = int32_t(2 * (aux >> 28) + 1);
        }
    }
};

// IQ2_XS: qs[e] is a 9-bit kIq2xsGrid index with 7 sign bits above it; scales[g] the 4-bit scales of
// values 0-15 (low nibble) and 16-31 of group g.
struct UnpackIQ2XS {
    using Block = BlockIQ2_XS;
    static constexpr int kOffset = 64;
    static constexpr float kTermScale = 0.125f;
    static constexpr bool kScalePer32 = false;
    static void unpack(const Block& b, uint8_t u[256], int32_t scale16[16]) {
        for (int e = 0; e < 32; ++e)
            put_entry8(u + 8 * e, iq::kIq2xsGrid[b.qs[e] & 511], kSignsOf[b.qs[e] >> 9], kOffset);
        nibble_pair_scales(b.scales, scale16);
    }
};

// IQ2_S: 10-bit kIq2sGrid indices (low 8 bits in qs[e], the top 2 of group g's entry l in qh[g] bits 2l,
// 2l + 1), explicit sign bytes in qs[32 + e]; scales as IQ2_XS.
struct UnpackIQ2S {
    using Block = BlockIQ2_S;
    static constexpr int kOffset = 64;
    static constexpr float kTermScale = 0.125f;
    static constexpr bool kScalePer32 = false;
    static void unpack(const Block& b, uint8_t u[256], int32_t scale16[16]) {
        for (int e = 0; e < 32; ++e) {
            const int g = e / 4, l = e % 4;
            put_entry8(u + 8 * e, iq::kIq2sGrid[b.qs[e] | ((b.qh[g] << (8 - 2 * l)) & 0x300)], b.qs[32 + e],
                       kOffset);
        }
        nibble_pair_scales(b.scales, scale16);
    }
};

// IQ1_S and IQ1_M: 8 values of a {-1, 0, 1} grid entry as u = 8 * grid + bias.
inline void put_ternary8(uint8_t* u, uint64_t grid, int bias) {
    const __m128i g = _mm_cvtsi64_si128(int64_t(grid));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(u),
                     _mm_add_epi8(_mm_sign_epi8(_mm_set1_epi8(8), g), _mm_set1_epi8(char(bias))));
}

// IQ1_S: group g of 32 values is 4 kIq1sGrid entries (11-bit indices: qs[4g + l] and bits 3l .. 3l + 2 of
// qh[g]) with the scale 2 s + 1 (qh[g] bits 12-14) and the sign of the group's shift of 1/8 (bit 15).
// The reference's (dx * dy) * (isum + ishift / 8) is ((dx * dy) * (8 isum + ishift)) / 8 bit for bit (8
// isum + ishift is an integer under 2^24, and the scalings by 8 are exact): one level 8 * grid +- 1 per
// value.
struct UnpackIQ1S {
    using Block = BlockIQ1_S;
    static constexpr int kOffset = 9;
    static constexpr float kTermScale = 0.125f;
    static constexpr bool kScalePer32 = true;
    static void unpack(const Block& b, uint8_t u[256], int32_t scale16[16]) {
        for (int g = 0; g < 8; ++g) {
            const int bias = kOffset + (b.qh[g] & 0x8000 ? -1 : 1);
            for (int l = 0; l < 4; ++l)
                put_ternary8(u + 32 * g + 8 * l, iq::kIq1sGrid[b.qs[4 * g + l] | (((b.qh[g] >> (3 * l)) & 7) << 8)],
                             bias);
            scale16[2 * g] = scale16[2 * g + 1] = 2 * ((b.qh[g] >> 12) & 7) + 1;
        }
    }
};

// IQ1_M: as IQ1_S with a shift sign per entry and a 3-bit scale per 16 values; qh[2g + h] holds the high
// index bits of entries 2h (bits 0-2) and 2h + 1 (bits 4-6) of group g and their shift signs (bits 3 and
// 7); the block's fp16 scale is the top nibbles of the four scale words.
struct UnpackIQ1M {
    using Block = BlockIQ1_M;
    static constexpr int kOffset = 9;
    static constexpr float kTermScale = 0.125f;
    static constexpr bool kScalePer32 = false;
    static float scale(const Block& b) {
        uint16_t sc[4];
        std::memcpy(sc, b.scales, sizeof sc);
        return half_to_float(uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) |
                                      (sc[3] & 0xf000)));
    }
    static void unpack(const Block& b, uint8_t u[256], int32_t scale16[16]) {
        uint16_t sc[4];
        std::memcpy(sc, b.scales, sizeof sc);
        for (int g = 0; g < 8; ++g)
            for (int l = 0; l < 4; ++l) {
                const int high = b.qh[2 * g + l / 2] >> (4 * (l % 2));
                put_ternary8(u + 32 * g + 8 * l, iq::kIq1sGrid[b.qs[4 * g + l] | ((high & 7) << 8)],
                             kOffset + (high & 8 ? -1 : 1));
                if (l % 2 == 0) scale16[2 * g + l / 2] = 2 * ((sc[g / 2] >> (6 * (g % 2) + 3 * (l / 2))) & 7) + 1;
            }
    }
};

// TQ1_0: trit n of a byte q is (uint8(q * 3^n) * 3) >> 8; bytes 0-31 hold values 32n + m, bytes 32-47
// values 160 + 16n + m, qh[j] values 240 + 4n + j. u = the trit (0-2), the level u - 1.
struct UnpackTQ1 {
    using Block = BlockTQ1_0;
    static constexpr int kOffset = 1;
    static constexpr float kTermScale = 1.0f;
    static constexpr bool kScalePer32 = true;
    static void unpack(const Block& b, uint8_t u[256], int32_t scale16[16]) {
        static constexpr int kPow3[5] = {1, 3, 9, 27, 81};
        const __m512i low = _mm512_set1_epi16(0xff), three = _mm512_set1_epi16(3);
        auto trits = [&](__m512i words, int n) {  // words: bytes widened to 16 bits
            const __m512i q = _mm512_and_si512(_mm512_mullo_epi16(words, _mm512_set1_epi16(int16_t(kPow3[n]))), low);
            return _mm512_cvtepi16_epi8(_mm512_srli_epi16(_mm512_mullo_epi16(q, three), 8));
        };
        const __m512i w0 = _mm512_cvtepu8_epi16(load256(b.qs));
        const __m512i w1 = _mm512_cvtepu8_epi16(_mm256_castsi128_si256(load128(b.qs + 32)));
        for (int n = 0; n < 5; ++n) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + 32 * n), trits(w0, n));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(u + 160 + 16 * n), _mm256_castsi256_si128(trits(w1, n)));
        }
        for (int n = 0; n < 4; ++n)
            for (int j = 0; j < 4; ++j) u[240 + 4 * n + j] = uint8_t((uint8_t(b.qh[j] * kPow3[n]) * 3) >> 8);
        for (int h = 0; h < 16; ++h) scale16[h] = 1;
    }
};

// TQ2_0: value 128c + 32l + m in bits 2l of qs[32c + m]; u = those 2 bits, the level u - 1.
struct UnpackTQ2 {
    using Block = BlockTQ2_0;
    static constexpr int kOffset = 1;
    static constexpr float kTermScale = 1.0f;
    static constexpr bool kScalePer32 = true;
    static void unpack(const Block& b, uint8_t u[256], int32_t scale16[16]) {
        const __m256i m2 = _mm256_set1_epi8(3);
        for (int c = 0; c < 2; ++c) {
            const __m256i q = load256(b.qs + 32 * c);
            for (int l = 0; l < 4; ++l)
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + 128 * c + 32 * l),
                                    _mm256_and_si256(_mm256_srli_epi16(q, 2 * l), m2));
        }
        for (int h = 0; h < 16; ++h) scale16[h] = 1;
    }
};

// The block's float scale: its fp16 d, or what the unpacker reads (IQ1_M has no d field).
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

template <class U>
void unpack_tile(const typename U::Block* const rows[kRows], int64_t i, TileIQ& out) {
    alignas(64) uint8_t u[kRows][256];
    alignas(64) int32_t scales[kRows][16];
    alignas(64) float d[kRows];
    for (int t = 0; t < kRows; ++t) {
        U::unpack(rows[t][i], u[t], scales[t]);
        d[t] = block_scale<U>(rows[t][i]);
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

template <class U>
void gemm_unpacked(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                   int nr, int nc) {
    using Block = typename U::Block;
    const int64_t nb = n / QK_K;
    thread_local std::vector<TileIQ> tiles;
    tiles.resize(size_t(nb));
    for (int r0 = 0; r0 < nr; r0 += kRows) {
        const Block* rows[kRows];
        tile_rows<Block, kRows>(rows, x, bx, r0, nr);
        for (int64_t i = 0; i < nb; ++i) unpack_tile<U>(rows, i, tiles[size_t(i)]);
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
                    constexpr int kSpan = U::kScalePer32 ? 2 : 1;
                    __m512i isum = _mm512_setzero_si512();
                    for (int h = 0; h < 16; h += kSpan) {
                        const int bsum = kSpan == 2 ? a.bsums[h] + a.bsums[h + 1] : a.bsums[h];
                        __m512i p = _mm512_set1_epi32(-U::kOffset * bsum);
                        for (int j = 0; j < 4 * kSpan; ++j)
                            p = _mm512_dpbusd_epi32(p, tile.w[4 * h + j],
                                                    _mm512_set1_epi32(load_i32(a.qs + 16 * h + 4 * j)));
                        isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(tile.scale[h], p));
                    }
                    acc[c] = add_term<U>(acc[c], tile.dx, _mm512_set1_ps(a.d), isum);
                }
            }
            for (int c = 0; c < cn; ++c) _mm512_mask_storeu_ps(s + size_t(c0 + c) * ldc + r0, mask, acc[c]);
        }
    }
}

// One column of IQ3_S: each row unpacked and multiplied as it streams (prefetched ahead, as the other
// decode kernels do); lanes 4h .. 4h + 3 of a 64-value chunk m are group 4m + h of 16 values.
void decode_iq3s_rows(int64_t n, float* s, const void* vx, size_t bx, const void* vy, int nr) {
    const int64_t nb = n / QK_K;
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    const auto* x = static_cast<const uint8_t*>(vx);
    const uint8_t* end = x + size_t(nr) * bx;
    const __m512i group_of = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    for (int r = 0; r < nr; ++r) {
        const auto* row = reinterpret_cast<const BlockIQ3_S*>(x + size_t(r) * bx);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            prefetch_ahead(reinterpret_cast<const uint8_t*>(&row[i]), sizeof(BlockIQ3_S), end);
            alignas(64) uint8_t u[256];
            alignas(64) int32_t scale16[16];
            UnpackIQ3S::unpack(row[i], u, scale16);
            const __m512i sc = _mm512_load_si512(scale16);
            __m512i acc = _mm512_setzero_si512();
            for (int m = 0; m < 4; ++m) {
                const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_load_si512(u + 64 * m),
                                                      _mm512_loadu_si512(y[i].qs + 64 * m));
                const __m512i scale =
                    _mm512_permutexvar_epi32(_mm512_add_epi32(group_of, _mm512_set1_epi32(4 * m)), sc);
                acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(scale, p));
            }
            int32_t offset = 0;
            for (int h = 0; h < 16; ++h) offset += scale16[h] * y[i].bsums[h];
            const int32_t isum = _mm512_reduce_add_epi32(acc) - UnpackIQ3S::kOffset * offset;
            sum = add_block_term(sum, half_to_float(row[i].d), y[i].d, isum);
        }
        s[r] = sum;
    }
}

// One column of IQ2_XXS and IQ3_XXS: a super-block at a time, in registers. The 8 words after the grid
// indices of each group of 32 values (IQ2_XXS: interleaved with them) hold four 7-bit sign groups (the
// eighth sign makes the count even: their parity) and the scale; the grid entries are gathered by index
// (8 values per IQ2_XXS entry, 4 per IQ3_XXS one), offset to u = level + kOffset, negated by mask, and
// meet the activation with vpdpbusd; lanes times their group's multiplier, less kOffset times the
// multiplied bsums, add up to the reference's isum.
struct GatherIQ2XXS {
    using U = UnpackIQ2XXS;
    static __m256i aux(const BlockIQ2_XXS& b, __m512i words) {
        (void)b;
        return _mm512_castsi512_si256(_mm512_permutexvar_epi32(
            _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 0, 0, 0, 0, 0, 0, 0, 0), words));
    }
    static __m512i words(const BlockIQ2_XXS& b) { return _mm512_loadu_si512(b.qs); }
    // g[m] = the magnitudes of values 64m .. 64m + 63 (entry l of group g indexed by byte 8g + l).
    static void grid(const BlockIQ2_XXS& b, __m512i, __m512i g[4]) {
        const auto* ib = reinterpret_cast<const uint8_t*>(b.qs);
        const uint64_t* grid = iq::kIq2xxsGrid.v;
        for (int m = 0; m < 4; ++m) {
            const uint8_t* e = ib + 16 * m;
            g[m] = _mm512_set_epi64(int64_t(grid[e[11]]), int64_t(grid[e[10]]), int64_t(grid[e[9]]),
                                    int64_t(grid[e[8]]), int64_t(grid[e[3]]), int64_t(grid[e[2]]),
                                    int64_t(grid[e[1]]), int64_t(grid[e[0]]));
        }
    }
};

struct GatherIQ3XXS {
    using U = UnpackIQ3XXS;
    static __m512i words(const BlockIQ3_XXS&) { return _mm512_setzero_si512(); }
    static __m256i aux(const BlockIQ3_XXS& b, __m512i) { return load256(b.qs + 64); }
    static void grid(const BlockIQ3_XXS& b, __m512i, __m512i g[4]) {
        const uint32_t* grid = iq::kIq3xxsGrid.v;
        for (int m = 0; m < 4; ++m) {
            const uint8_t* e = b.qs + 16 * m;
            const __m128i q0 =
                _mm_set_epi32(int(grid[e[3]]), int(grid[e[2]]), int(grid[e[1]]), int(grid[e[0]]));
            const __m128i q1 =
                _mm_set_epi32(int(grid[e[7]]), int(grid[e[6]]), int(grid[e[5]]), int(grid[e[4]]));
            const __m128i q2 =
                _mm_set_epi32(int(grid[e[11]]), int(grid[e[10]]), int(grid[e[9]]), int(grid[e[8]]));
            const __m128i q3 =
                _mm_set_epi32(int(grid[e[15]]), int(grid[e[14]]), int(grid[e[13]]), int(grid[e[12]]));
            g[m] = _mm512_inserti32x4(
                _mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(q0), q1, 1), q2, 2), q3, 3);
        }
    }
};

template <class G, class Block>
inline float xxs_row(const Block* x, const BlockQ8_K* y, int64_t nb, const uint8_t* end) {
    using U = typename G::U;
    const __m512i field = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i field_shift = _mm512_setr_epi32(0, 7, 14, 21, 0, 7, 14, 21, 0, 7, 14, 21, 0, 7, 14, 21);
    const __m512i seven = _mm512_set1_epi32(127), one = _mm512_set1_epi32(1);
    const __m512i off = _mm512_set1_epi8(char(U::kOffset));
    const __m512i lane_group = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        const Block& b = x[i];
        const BlockQ8_K& a = y[i];
        prefetch_ahead(reinterpret_cast<const uint8_t*>(&b), sizeof(Block), end);
        const __m512i words = G::words(b);
        const __m256i aux = G::aux(b, words);
        // Sign bytes of values 128h .. 128h + 127: field l of group 4h + k at byte 4k + l.
        uint64_t negative[4];
        for (int h = 0; h < 2; ++h) {
            const __m512i f = _mm512_and_si512(
                _mm512_srlv_epi32(_mm512_permutexvar_epi32(_mm512_add_epi32(field, _mm512_set1_epi32(4 * h)),
                                                           _mm512_castsi256_si512(aux)),
                                  field_shift),
                seven);
            __m512i p = _mm512_xor_si512(f, _mm512_srli_epi32(f, 4));
            p = _mm512_xor_si512(p, _mm512_srli_epi32(p, 2));
            p = _mm512_xor_si512(p, _mm512_srli_epi32(p, 1));
            const __m128i bytes =
                _mm512_cvtepi32_epi8(_mm512_or_si512(f, _mm512_slli_epi32(_mm512_and_si512(p, one), 7)));
            negative[2 * h] = uint64_t(_mm_cvtsi128_si64(bytes));
            negative[2 * h + 1] = uint64_t(_mm_extract_epi64(bytes, 1));
        }
        const __m256i scale8 =
            _mm256_add_epi32(_mm256_slli_epi32(_mm256_srli_epi32(aux, 28), 1), _mm256_set1_epi32(1));
        const __m512i scale = _mm512_castsi256_si512(scale8);
        __m512i g[4];
        G::grid(b, words, g);
        // kOffset times the multiplied bsums, taken off in lanes 0-7.
        const __m256i bsp = _mm256_madd_epi16(load256(a.bsums), _mm256_set1_epi16(1));
        __m512i acc = _mm512_castsi256_si512(
            _mm256_mullo_epi32(_mm256_mullo_epi32(scale8, bsp), _mm256_set1_epi32(-U::kOffset)));
        acc = _mm512_inserti64x4(acc, _mm256_setzero_si256(), 1);
        for (int m = 0; m < 4; ++m) {
            const __m512i u =
                _mm512_mask_sub_epi8(_mm512_add_epi8(off, g[m]), __mmask64(negative[m]), off, g[m]);
            const __m512i d =
                _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, _mm512_loadu_si512(a.qs + 64 * m));
            const __m512i sc =
                _mm512_permutexvar_epi32(_mm512_add_epi32(lane_group, _mm512_set1_epi32(2 * m)), scale);
            acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(sc, d));
        }
        const int32_t isum = _mm512_reduce_add_epi32(acc);
        const __m128 t =
            _mm_mul_ss(_mm_mul_ss(_mm_set_ss(half_to_float(b.d)), _mm_set_ss(a.d)), _mm_set_ss(float(isum)));
        sum = _mm_cvtss_f32(_mm_add_ss(_mm_set_ss(sum), _mm_mul_ss(t, _mm_set_ss(U::kTermScale))));
    }
    return sum;
}

template <class G>
void decode_xxs_rows(int64_t n, float* s, const void* vx, size_t bx, const void* vy, int nr) {
    using Block = typename G::U::Block;
    const auto* x = static_cast<const uint8_t*>(vx);
    const uint8_t* end = x + size_t(nr) * bx;
    for (int r = 0; r < nr; ++r)
        s[r] = xxs_row<G>(reinterpret_cast<const Block*>(x + size_t(r) * bx),
                          static_cast<const BlockQ8_K*>(vy), n / QK_K, end);
}

}  // namespace

namespace avx512 {
void gemm_iq3_s(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, int nr,
                int nc) {
    if (nc == 1) return decode_iq3s_rows(n, s, x, bx, y, nr);
    if (nc < kMinColumns)
        return scalar::gemm_by_vec_dot<avx2::vec_dot_iq3_s>(n, s, ldc, x, bx, y, by, nr, nc);
    gemm_unpacked<UnpackIQ3S>(n, s, ldc, x, bx, y, by, nr, nc);
}
#define GGML_GEMM_UNPACKED(name, unpack)                                                                  \
    void gemm_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, \
                     int nr, int nc) {                                                                    \
        if (nc < kMinColumns)                                                                             \
            return scalar::gemm_by_vec_dot<avx2::vec_dot_##name>(n, s, ldc, x, bx, y, by, nr, nc);        \
        gemm_unpacked<unpack>(n, s, ldc, x, bx, y, by, nr, nc);                                           \
    }
#define GGML_GEMM_UNPACKED_OR_DECODE(name, unpack, decode)                                                \
    void gemm_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, \
                     int nr, int nc) {                                                                    \
        if (nc == 1) return decode(n, s, x, bx, y, nr);                                                   \
        if (nc < kMinColumns)                                                                             \
            return scalar::gemm_by_vec_dot<avx2::vec_dot_##name>(n, s, ldc, x, bx, y, by, nr, nc);        \
        gemm_unpacked<unpack>(n, s, ldc, x, bx, y, by, nr, nc);                                           \
    }
GGML_GEMM_UNPACKED_OR_DECODE(iq3_xxs, UnpackIQ3XXS, decode_xxs_rows<GatherIQ3XXS>)
GGML_GEMM_UNPACKED_OR_DECODE(iq2_xxs, UnpackIQ2XXS, decode_xxs_rows<GatherIQ2XXS>)
GGML_GEMM_UNPACKED(iq2_xs, UnpackIQ2XS)
GGML_GEMM_UNPACKED(iq2_s, UnpackIQ2S)
GGML_GEMM_UNPACKED(iq1_s, UnpackIQ1S)
GGML_GEMM_UNPACKED(iq1_m, UnpackIQ1M)
GGML_GEMM_UNPACKED(tq1_0, UnpackTQ1)
GGML_GEMM_UNPACKED(tq2_0, UnpackTQ2)
#undef GGML_GEMM_UNPACKED
#undef GGML_GEMM_UNPACKED_OR_DECODE
}  // namespace avx512

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
