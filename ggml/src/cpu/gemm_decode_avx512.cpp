// Decode kernels (one activation column, or a few: a step of several streams, a short draft) for block
// formats at the AVX-512 level: each weight row is streamed once, in memory order, with no transposes, and
// decoded once for all the columns; bit-identical to the reference.
//
// 32-value blocks (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, Q8_0): 16 blocks of a row at a time. Each block's
// 32 quants go to one 128-bit lane (4 blocks per vector, picked out of the row with word permutes), meet the
// activation halves prepared in the same layout with vpdpbusd, and a 4x4 add network leaves the 16 exact
// block sums in one vector. The reference's float term (dx * dy) * isum (+ mx * sy for Q4_1 and Q5_1, whose
// blocks carry a minimum) is then computed lane-wise. Those
// terms must be added to the row's sum one block at a time, in order: the terms of 16 rows are
// transposed so that a lane holds a row, and added column by column.
//
// Q4_K and Q5_K: one super-block at a time. Quants (Q5_K's with their fifth bit from qh) meet the
// activation (arranged once per call to match the nibble layout) with vpmaddubsw, and the sub-block scales
// multiply the pair sums with vpdpwssd, so the 16 lanes add up to the reference's isum exactly; imins comes
// from the activation's bsums.
//
// Q6_K: one super-block at a time, 0-63 values against the activation with vpdpbusd, lanes times their
// group's scale with vpdpwssd, the values' offset of 32 taken back through bsums.
#include "kernels_x86_intrin.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"
#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX512_BEGIN
#include "kernels_x86_avx512.h"
#include "kernels_x86_decode.h"

namespace ggml::cpu {
namespace {

// A chunk's vectors hold block k of the chunk in element element_of(k) (the add network's order).
constexpr int element_of(int k) {
    return 4 * (k % 4) + k / 4;
}

// Bytes [0, n) of a 64-byte load (n clamped to [0, 64]).
inline __mmask64 first_bytes(int64_t n) {
    return n >= 64 ? ~__mmask64(0) : n <= 0 ? __mmask64(0) : (__mmask64(1) << n) - 1;
}

inline __m512i load_bytes(const uint8_t* p, int64_t n) {
    return _mm512_maskz_loadu_epi8(first_bytes(n), p);
}

// p[g] 128-bit lane b holds 4 partial sums of block 4g + b; the result's element element_of(4g + b)
// holds their total.
inline __m512i reduce_4x4(const __m512i p[4]) {
    const __m512i a = _mm512_add_epi32(_mm512_unpacklo_epi64(p[0], p[1]), _mm512_unpackhi_epi64(p[0], p[1]));
    const __m512i b = _mm512_add_epi32(_mm512_unpacklo_epi64(p[2], p[3]), _mm512_unpackhi_epi64(p[2], p[3]));
    const __m512 af = _mm512_castsi512_ps(a), bf = _mm512_castsi512_ps(b);
    return _mm512_add_epi32(_mm512_castps_si512(_mm512_shuffle_ps(af, bf, _MM_SHUFFLE(2, 0, 2, 0))),
                            _mm512_castps_si512(_mm512_shuffle_ps(af, bf, _MM_SHUFFLE(3, 1, 3, 1))));
}

// out[e] lane r = in[r] element e.
inline void transpose_16x16(const __m512 in[16], __m512 out[16]) {
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(in[i], in[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(in[i], in[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        u[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    // u[4i + m] 128-bit lane j: element 4j + m of rows 4i .. 4i + 3.
    for (int m = 0; m < 4; ++m) {
        const __m512 a0 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x88), a1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xdd);
        const __m512 b0 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x88),
                     b1 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xdd);
        out[m] = _mm512_shuffle_f32x4(a0, b0, 0x88);
        out[4 + m] = _mm512_shuffle_f32x4(a1, b1, 0x88);
        out[8 + m] = _mm512_shuffle_f32x4(a0, b0, 0xdd);
        out[12 + m] = _mm512_shuffle_f32x4(a1, b1, 0xdd);
    }
}

// Word-permute indices, built at compile time.
struct Idx32 {
    alignas(64) int16_t v[32];
};

// ---------------------------------------------------------------------------------------------------
// 32-value blocks paired with Q8_0.

// The activation for 16 blocks: lo[g] / hi[g] 128-bit lane b = quants 0-15 / 16-31 of block 4g + b;
// off = kOffset * the block's quant sum, dy = its scale and, for Q8_1 blocks, sy = its stored d * sum,
// per element.
struct alignas(64) ActChunk32 {
    __m512i lo[4], hi[4];
    __m512i off;
    __m512 dy, sy;
};

// Q8_0 or Q8_1 blocks (Q8_1's s read into sy).
template <int kOffset, class Act>
void prepare_act32(ActChunk32* out, const Act* y, int64_t nb) {
    constexpr bool kSums = std::is_same_v<Act, BlockQ8_1>;
    const int64_t chunks = (nb + 15) / 16;
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t c = 0; c < chunks; ++c) {
        ActChunk32& a = out[c];
        const int cnt = int(std::min<int64_t>(16, nb - 16 * c));
        const Act* b = y + 16 * c;
        alignas(32) uint16_t d[16] = {}, sums[16] = {};
        __m512i p[4];
        for (int g = 0; g < 4; ++g) {
            __m128i lo[4], hi[4];
            for (int j = 0; j < 4; ++j) {
                const int k = 4 * g + j;
                lo[j] = k < cnt ? load128(b[k].qs) : _mm_setzero_si128();
                hi[j] = k < cnt ? load128(b[k].qs + 16) : _mm_setzero_si128();
            }
            a.lo[g] = _mm512_inserti32x4(
                _mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(lo[0]), lo[1], 1), lo[2], 2), lo[3], 3);
            a.hi[g] = _mm512_inserti32x4(
                _mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(hi[0]), hi[1], 1), hi[2], 2), hi[3], 3);
            p[g] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, a.lo[g]), ones, a.hi[g]);
        }
        for (int k = 0; k < cnt; ++k) {
            d[element_of(k)] = b[k].d;
            if constexpr (kSums) sums[element_of(k)] = b[k].s;
        }
        a.off = _mm512_mullo_epi32(reduce_4x4(p), _mm512_set1_epi32(kOffset));
        a.dy = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d)));
        a.sy = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sums)));
    }
}

// Word `word` of each of 4 blocks (the scale d is word 0; Q4_1's and Q5_1's minimum m word 1), moved to
// the elements of group g's blocks.
struct GroupWords {
    Idx32 index[4];
    uint32_t mask[4];
};
constexpr GroupWords group_words(int block_bytes, int word) {
    GroupWords r{};
    for (int g = 0; g < 4; ++g)
        for (int b = 0; b < 4; ++b) {
            r.index[g].v[element_of(4 * g + b)] = int16_t(b * block_bytes / 2 + word);
            r.mask[g] |= 1u << element_of(4 * g + b);
        }
    return r;
}

// acc with word kWord of group g's blocks (at pg; `valid` of them present unless kFull) merged into
// the group's elements. Reads no byte past that word of the group's last block.
template <int kBlockBytes, int kWord, bool kFull>
inline __m512i gather_words(__m512i acc, const uint8_t* pg, int valid, int g) {
    static constexpr GroupWords kIdx = group_words(kBlockBytes, kWord);
    constexpr int64_t kNeeded = 3 * kBlockBytes + 2 * kWord + 2;
    const int64_t left = kFull ? kNeeded : std::min<int64_t>(kNeeded, int64_t(valid) * kBlockBytes);
    const __m512i idx = _mm512_load_si512(kIdx.index[g].v);
    if constexpr (kNeeded <= 64) {
        const __m512i h = kFull ? _mm512_loadu_si512(pg) : load_bytes(pg, left);
        return _mm512_mask_permutexvar_epi16(acc, kIdx.mask[g], idx, h);
    } else {
        const __m512i h0 = kFull ? _mm512_loadu_si512(pg) : load_bytes(pg, left);
        const __m512i h1 = load_bytes(pg + 64, left - 64);
        return _mm512_mask_blend_epi16(kIdx.mask[g], acc, _mm512_permutex2var_epi16(h0, idx, h1));
    }
}

// Weight decoders: load(p, cnt, q1, q2, m) gives the quants of the chunk's blocks as unsigned bytes
// (level + kOffset) in the activation's layout (q1 pairs with lo, q2 with hi) and returns the blocks'
// scales per element; the types with a minimum (kHasMin, paired with Q8_1) put it in *m. Bytes past cnt
// blocks are never read.

// 16 bytes of each of 4 blocks, block b at p + b * stride, in 128-bit lane b; lanes of blocks past
// `valid` are zero (and not read).
template <bool kFull>
inline __m512i lanes4(const uint8_t* p, int stride, int valid) {
    auto lane = [&](int b) {
        return kFull ? load128(p + b * stride) : _mm_maskz_loadu_epi8(b < valid ? 0xffff : 0, p + b * stride);
    };
    return _mm512_inserti32x4(
        _mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(lane(0)), lane(1), 1), lane(2), 2), lane(3), 3);
}

// Q4_0 and IQ4_NL (18-byte blocks: d then 16 bytes of nibbles, value j low, j + 16 high) and Q4_1
// (20-byte blocks: d, the minimum m, then the same nibbles; values 0-15 as they are).
template <int kBytes, bool kNonLinear = false>
struct Nibbles {
    static constexpr int kBlockBytes = kBytes;
    static constexpr bool kHasMin = kBytes == 20;
    static constexpr int kOffset = kNonLinear ? 128 : kHasMin ? 0 : 8;

    template <bool kFull>
    static __m512 load(const uint8_t* p, int cnt, __m512i q1[4], __m512i q2[4], __m512* m) {
        const __m512i m4 = _mm512_set1_epi8(0x0f);
        __m512i d = _mm512_setzero_si512(), mins = _mm512_setzero_si512();
        for (int g = 0; g < 4; ++g) {
            const uint8_t* pg = p + 4 * g * kBlockBytes;
            const int valid = cnt - 4 * g;
            const __m512i q = lanes4<kFull>(pg + kBlockBytes - 16, kBlockBytes, valid);
            q1[g] = _mm512_and_si512(q, m4);
            q2[g] = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
            if constexpr (kNonLinear) {
                const __m512i table = _mm512_broadcast_i32x4(load128(kIq4nlBiased));
                q1[g] = _mm512_shuffle_epi8(table, q1[g]);
                q2[g] = _mm512_shuffle_epi8(table, q2[g]);
            }
            d = gather_words<kBlockBytes, 0, kFull>(d, pg, valid, g);
            if constexpr (kHasMin) mins = gather_words<kBlockBytes, 1, kFull>(mins, pg, valid, g);
        }
        if constexpr (kHasMin) *m = _mm512_cvtph_ps(_mm512_castsi512_si256(mins));
        return _mm512_cvtph_ps(_mm512_castsi512_si256(d));
    }
};

// MXFP4: 17-byte blocks, the E8M0 exponent e then 16 bytes of nibbles (IQ4_NL's layout) of MXFP4's
// levels; the scale 2^(e - 128) (mxfp4_half_scale) built from e's bits.
struct Nibbles17 {
    static constexpr int kBlockBytes = 17;
    static constexpr bool kHasMin = false;
    static constexpr int kOffset = 128;

    // Word k of the gathered scale words holds block k's e in its high byte when the block starts at an odd
    // byte of its group (blocks 1 and 3 of each 4), in its low byte otherwise.
    struct Shifts {
        alignas(32) int16_t v[16];
    };
    static constexpr Shifts shifts() {
        Shifts r{};
        for (int k = 0; k < 16; ++k) r.v[element_of(k)] = int16_t((k % 4) * kBlockBytes % 2 ? 8 : 0);
        return r;
    }

    template <bool kFull>
    static __m512 load(const uint8_t* p, int cnt, __m512i q1[4], __m512i q2[4], __m512*) {
        static constexpr Shifts kShifts = shifts();
        const __m512i m4 = _mm512_set1_epi8(0x0f);
        const __m512i table = _mm512_broadcast_i32x4(load128(kMxfp4Biased));
        __m512i words = _mm512_setzero_si512();
        for (int g = 0; g < 4; ++g) {
            const uint8_t* pg = p + 4 * g * kBlockBytes;
            const int valid = cnt - 4 * g;
            const __m512i q = lanes4<kFull>(pg + 1, kBlockBytes, valid);
            q1[g] = _mm512_shuffle_epi8(table, _mm512_and_si512(q, m4));
            q2[g] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4));
            // The words holding the 4 exponents, as Q4_0's scales.
            words = gather_words<kBlockBytes, 0, kFull>(words, pg, valid, g);
        }
        const __m256i w = _mm256_srlv_epi16(_mm512_castsi512_si256(words),
                                            _mm256_load_si256(reinterpret_cast<const __m256i*>(kShifts.v)));
        const __m512i e = _mm512_cvtepu8_epi32(_mm256_cvtepi16_epi8(w));
        // 2^(e - 128) as float bits: (e - 1) << 23, or the subnormal 0x00200000 << e below e = 2.
        __m512i bits = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
        bits = _mm512_mask_sllv_epi32(bits, _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2)),
                                      _mm512_set1_epi32(0x00200000), e);
        return _mm512_castsi512_ps(bits);
    }
};

// Q5_0 (22-byte blocks: d, the 32 fifth bits, bit j for value j, then Q4_0's nibbles; values + 16) and
// Q5_1 (24-byte blocks: d, the minimum m, then the same; values 0-31 as they are).
template <int kBytes>
struct Bits5Nibbles {
    static constexpr int kBlockBytes = kBytes;
    static constexpr bool kHasMin = kBytes == 24;
    static constexpr int kOffset = kHasMin ? 0 : 16;

    template <bool kFull>
    static __m512 load(const uint8_t* p, int cnt, __m512i q1[4], __m512i q2[4], __m512* m) {
        const __m512i m4 = _mm512_set1_epi8(0x0f), bit4 = _mm512_set1_epi8(0x10);
        __m512i d = _mm512_setzero_si512(), mins = _mm512_setzero_si512();
        for (int g = 0; g < 4; ++g) {
            const uint8_t* pg = p + 4 * g * kBlockBytes;
            const int valid = cnt - 4 * g;
            const __m512i q = lanes4<kFull>(pg + kBlockBytes - 16, kBlockBytes, valid);
            // Block b's bits 0-15 go with its low nibbles (lane b of q1), bits 16-31 with the high ones.
            uint64_t lo = 0, hi = 0;
            for (int b = 0; b < 4; ++b) {
                if (!kFull && b >= valid) break;
                uint32_t h;
                std::memcpy(&h, pg + b * kBlockBytes + kBlockBytes - 20, sizeof h);
                lo |= uint64_t(h & 0xffff) << (16 * b);
                hi |= uint64_t(h >> 16) << (16 * b);
            }
            q1[g] = _mm512_or_si512(_mm512_and_si512(q, m4), _mm512_maskz_mov_epi8(__mmask64(lo), bit4));
            q2[g] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q, 4), m4),
                                    _mm512_maskz_mov_epi8(__mmask64(hi), bit4));
            d = gather_words<kBlockBytes, 0, kFull>(d, pg, valid, g);
            if constexpr (kHasMin) mins = gather_words<kBlockBytes, 1, kFull>(mins, pg, valid, g);
        }
        if constexpr (kHasMin) *m = _mm512_cvtph_ps(_mm512_castsi512_si256(mins));
        return _mm512_cvtph_ps(_mm512_castsi512_si256(d));
    }
};

// Q8_0: 34-byte blocks, d then 32 signed bytes (flipped to unsigned: level + 128).
struct Bytes34 {
    static constexpr int kBlockBytes = 34;
    static constexpr bool kHasMin = false;
    static constexpr int kOffset = 128;

    template <bool kFull>
    static __m512 load(const uint8_t* p, int cnt, __m512i q1[4], __m512i q2[4], __m512*) {
        const __m512i flip = _mm512_set1_epi8(char(0x80));
        __m512i d = _mm512_setzero_si512();
        for (int g = 0; g < 4; ++g) {
            const uint8_t* pg = p + 4 * g * kBlockBytes;
            const int valid = cnt - 4 * g;
            q1[g] = _mm512_xor_si512(lanes4<kFull>(pg + 2, kBlockBytes, valid), flip);
            q2[g] = _mm512_xor_si512(lanes4<kFull>(pg + 18, kBlockBytes, valid), flip);
            d = gather_words<kBlockBytes, 0, kFull>(d, pg, valid, g);
        }
        return _mm512_cvtph_ps(_mm512_castsi512_si256(d));
    }
};

// 16 floats, one chunk's terms of a row.
struct alignas(64) Terms16 {
    float v[16];
};

// The terms (dx * dy) * isum of one chunk of a row against one column, per element, plus mx * sy for the
// types with a minimum.
template <class D>
inline __m512 column_terms(const __m512i q1[4], const __m512i q2[4], __m512 dx, __m512 mx,
                           const ActChunk32& a) {
    __m512i s[4];
    for (int g = 0; g < 4; ++g)
        s[g] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q1[g], a.lo[g]), q2[g], a.hi[g]);
    __m512i isum = reduce_4x4(s);
    if constexpr (D::kOffset != 0) isum = _mm512_sub_epi32(isum, a.off);
    const __m512 t = _mm512_mul_ps(_mm512_mul_ps(dx, a.dy), _mm512_cvtepi32_ps(isum));
    if constexpr (D::kHasMin) return _mm512_add_ps(t, _mm512_mul_ps(mx, a.sy));
    return t;
}

// kCols activation columns (a decode step of several streams, or a short draft): each chunk of weights is
// read and decoded once for all of them.
template <class D, int kCols>
void decode_blocks32(int64_t n, float* s, size_t ldc, const void* vx, size_t bx, const void* vy, size_t by,
                     int nr) {
    const int64_t nb = n / 32;
    const int64_t chunks = (nb + 15) / 16, full = nb / 16;
    const int tail = int(nb - 16 * full);
    // act: column col's chunks at col * chunks; terms: column col, row r, chunk c at (col * 16 + r) * chunks
    // + c.
    thread_local std::vector<ActChunk32> act;
    thread_local std::vector<Terms16> terms;
    using Act = std::conditional_t<D::kHasMin, BlockQ8_1, BlockQ8_0>;
    act.resize(size_t(kCols * chunks));
    for (int col = 0; col < kCols; ++col)
        prepare_act32<D::kOffset>(
            act.data() + col * chunks,
            reinterpret_cast<const Act*>(static_cast<const uint8_t*>(vy) + size_t(col) * by), nb);
    terms.resize(size_t(kCols * 16 * chunks));
    // Plain pointers: the vectors are thread_local, and a float store through an __m512 may alias anything.
    const ActChunk32* const a = act.data();
    Terms16* const t = terms.data();
    const auto* x = static_cast<const uint8_t*>(vx);
    const uint8_t* end = x + size_t(nr) * bx;
    constexpr int64_t kChunkBytes = 16 * D::kBlockBytes;
    for (int r0 = 0; r0 < nr; r0 += 16) {
        const int rows = std::min(16, nr - r0);
        for (int r = 0; r < rows; ++r) {
            const uint8_t* row = x + size_t(r0 + r) * bx;
            Terms16* row_terms = t + r * chunks;  // column col's at + col * 16 * chunks
            __m512i q1[4], q2[4];
            __m512 dx, mx = _mm512_setzero_ps();
            for (int64_t c = 0; c < full; ++c) {
                prefetch_ahead(row + c * kChunkBytes, kChunkBytes, end);
                dx = D::template load<true>(row + c * kChunkBytes, 16, q1, q2, &mx);
                for (int col = 0; col < kCols; ++col)
                    _mm512_store_ps(row_terms[col * 16 * chunks + c].v,
                                    column_terms<D>(q1, q2, dx, mx, a[col * chunks + c]));
            }
            if (tail) {
                prefetch_ahead(row + full * kChunkBytes, int64_t(tail) * D::kBlockBytes, end);
                // The last, partial chunk is read whole where the bytes after the row are this call's next
                // rows: its lanes past the row hold terms that are never added, and masked loads made a
                // 2880-value row (90 blocks: 10 in the last chunk) 20 % slower than a 4096-value one.
                const uint8_t* last = row + full * kChunkBytes;
                const bool readable = size_t(nr - (r0 + r) - 1) * bx >= size_t(16 - tail) * D::kBlockBytes;
                dx = readable ? D::template load<true>(last, 16, q1, q2, &mx)
                              : D::template load<false>(last, tail, q1, q2, &mx);
                for (int col = 0; col < kCols; ++col)
                    _mm512_store_ps(row_terms[col * 16 * chunks + full].v,
                                    column_terms<D>(q1, q2, dx, mx, a[col * chunks + full]));
            }
        }
        // Each row's terms added in block order, 16 rows side by side.
        for (int col = 0; col < kCols; ++col) {
            const Terms16* col_terms = t + col * 16 * chunks;
            __m512 acc = _mm512_setzero_ps();
            for (int64_t c = 0; c < chunks; ++c) {
                __m512 in[16], out[16];
                for (int r = 0; r < 16; ++r)
                    in[r] = r < rows ? _mm512_load_ps(col_terms[r * chunks + c].v) : _mm512_setzero_ps();
                transpose_16x16(in, out);
                const int cnt = c < full ? 16 : tail;
                for (int k = 0; k < cnt; ++k) acc = _mm512_add_ps(acc, out[element_of(k)]);
            }
            _mm512_mask_storeu_ps(s + size_t(col) * ldc + r0, __mmask16((1u << rows) - 1), acc);
        }
    }
}

// nc columns, at most kMaxDecodeColumns.
template <class D>
void decode_blocks32_columns(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y,
                             size_t by, int nr, int nc) {
    switch (nc) {
        case 1:
            return decode_blocks32<D, 1>(n, s, ldc, x, bx, y, by, nr);
        case 2:
            return decode_blocks32<D, 2>(n, s, ldc, x, bx, y, by, nr);
        case 3:
            return decode_blocks32<D, 3>(n, s, ldc, x, bx, y, by, nr);
        default:
            return decode_blocks32<D, 4>(n, s, ldc, x, bx, y, by, nr);
    }
}

// ---------------------------------------------------------------------------------------------------
// Q4_K.

// The activation of one super-block in the weights' nibble layout: y[0] = values 0-31 and 64-95 (low
// nibbles of qs[0..63]), y[1] = 32-63 and 96-127 (high nibbles), y[2], y[3] the same for 128-255;
// bsp words 8-15 = bsums[2j] + bsums[2j + 1], the sums the mins multiply.
struct alignas(64) ActQ4K {
    __m512i y[4];
    __m256i bsp;
    float d;
};

void prepare_act_q4k(ActQ4K* out, const BlockQ8_K* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i) {
        const int8_t* q = y[i].qs;
        ActQ4K& a = out[i];
        for (int c = 0; c < 2; ++c) {
            a.y[2 * c] = _mm512_inserti64x4(_mm512_castsi256_si512(load256(q + 128 * c)), load256(q + 128 * c + 64), 1);
            a.y[2 * c + 1] =
                _mm512_inserti64x4(_mm512_castsi256_si512(load256(q + 128 * c + 32)), load256(q + 128 * c + 96), 1);
        }
        const __m256i pairs = _mm256_madd_epi16(load256(y[i].bsums), _mm256_set1_epi16(1));
        a.bsp = _mm256_inserti128_si256(_mm256_setzero_si256(), _mm256_cvtepi32_epi16(pairs), 1);
        a.d = y[i].d;
    }
}

// The 6-bit scales and mins of a Q4_K/Q5_K super-block (see unpack_k4_scales) as 16 words:
// sc[0..7], mn[0..7].
inline __m256i k4_scale_words(const uint8_t* packed) {
    const __m128i v = load128(packed);  // 12 scale bytes (the 4 after them are ignored)
    const __m128i lo = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    const __m128i top = _mm_shuffle_epi8(v, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    const __m128i low_bits = _mm_and_si128(lo, _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0));
    const __m128i high_nibble =
        _mm_and_si128(_mm_srli_epi16(lo, 4), _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15));
    const __m128i top_bits = _mm_and_si128(_mm_srli_epi16(top, 2), _mm_set1_epi8(0x30));
    return _mm256_cvtepu8_epi16(_mm_or_si128(_mm_or_si128(low_bits, high_nibble), top_bits));
}

constexpr Idx32 scale_pair_index(int a, int b) {
    Idx32 r{};
    for (int i = 0; i < 16; ++i) {
        r.v[i] = int16_t(a);
        r.v[16 + i] = int16_t(b);
    }
    return r;
}

// The right shifts that bring the fifth bit of Q5_K's values to bit 0: nibble vector k holds values 32k'
// + l of two 64-value chunks (see ActQ4K), whose bits in qh[l] are 2j (low nibbles) and 2j + 1 (high).
inline __m512i q5k_shift(int k) {
    const int s = (k / 2) * 4 + k % 2;  // vectors 0-3: chunks 0 and 1 (shifts s, s + 2), then 2 and 3
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(int16_t(s))),
                              _mm256_set1_epi16(int16_t(s + 2)), 1);
}

// One row's dot products with kCols columns: Q4_K, or Q5_K (kFifthBit: each value's bit 4 from qh).
template <class Block, bool kFifthBit, int kCols>
inline void k4_row(const Block* x, const ActQ4K* const act[kCols], int64_t nb, const uint8_t* end,
                   float* out) {
    static constexpr Idx32 kPair[4] = {scale_pair_index(0, 2), scale_pair_index(1, 3), scale_pair_index(4, 6),
                                       scale_pair_index(5, 7)};
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512i shift[4], one;
    if constexpr (kFifthBit) {
        for (int k = 0; k < 4; ++k) shift[k] = q5k_shift(k);
        one = _mm512_set1_epi8(1);
    }
    __m128 sum[kCols];
    for (int col = 0; col < kCols; ++col) sum[col] = _mm_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const Block& b = x[i];
        prefetch_ahead(reinterpret_cast<const uint8_t*>(&b), sizeof(Block), end);
        const __m512i q0 = _mm512_loadu_si512(b.qs), q1 = _mm512_loadu_si512(b.qs + 64);
        const __m256i w = k4_scale_words(b.scales);
        const __m512i w512 = _mm512_castsi256_si512(w);
        __m512i nib[4] = {_mm512_and_si512(q0, m4), _mm512_and_si512(_mm512_srli_epi16(q0, 4), m4),
                          _mm512_and_si512(q1, m4), _mm512_and_si512(_mm512_srli_epi16(q1, 4), m4)};
        if constexpr (kFifthBit) {
            const __m512i qh = _mm512_broadcast_i64x4(load256(b.qh));
            for (int k = 0; k < 4; ++k)
                nib[k] = _mm512_or_si512(
                    nib[k], _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift[k]), one), 4));
        }
        __m512i scale[4];
        for (int j = 0; j < 4; ++j) scale[j] = _mm512_permutexvar_epi16(_mm512_load_si512(kPair[j].v), w512);
        const __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128(load_i32(&b.d)));  // [d, dmin, 0, 0]
        for (int col = 0; col < kCols; ++col) {
            const ActQ4K& a = act[col][i];
            __m512i acc = _mm512_setzero_si512();
            for (int j = 0; j < 4; ++j)
                acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(nib[j], a.y[j]), scale[j]);
            const __m256i mins = _mm256_madd_epi16(w, a.bsp);
            const __m256i h8 =
                _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
            const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(h8, mins), _mm256_setzero_si256());
            // [isum, imins, 0, 0]
            const __m128i sums = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
            const __m128 t = _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(a.d), dd), _mm_cvtepi32_ps(sums));
            sum[col] = _mm_add_ss(sum[col], _mm_sub_ss(t, _mm_movehdup_ps(t)));
        }
    }
    for (int col = 0; col < kCols; ++col) out[col] = _mm_cvtss_f32(sum[col]);
}

// ---------------------------------------------------------------------------------------------------
// Q6_K.

// Lane k of vector m (values 64m .. 64m + 63, 4 per lane) belongs to group 4m + k / 4.
constexpr Idx32 q6k_group_index(int m) {
    Idx32 r{};
    for (int k = 0; k < 16; ++k) r.v[2 * k] = int16_t(2 * (4 * m + k / 4));
    for (int k = 0; k < 16; ++k) r.v[2 * k + 1] = int16_t(2 * (4 * m + k / 4) + 1);
    return r;
}

// One row's dot product. Values are 0-63 (the reference's q - 32 + 32): their products with the activation
// (vpdpbusd) go by group, each lane's four (|sum| < 2^15) times its group's scale with vpdpwssd, and the
// -32 of every value is taken back as 32 * scale * bsum. The integer total is the reference's isum.
template <int kCols>
inline void q6k_row(const BlockQ6_K* x, const BlockQ8_K* const act[kCols], int64_t nb, const uint8_t* end,
                    float* out) {
    static constexpr Idx32 kGroup[4] = {q6k_group_index(0), q6k_group_index(1), q6k_group_index(2),
                                        q6k_group_index(3)};
    const __m512i m4 = _mm512_set1_epi8(0x0f), m2 = _mm512_set1_epi8(0x03);
    // Right shifts of the high bits: values 0-31 of a half take qh >> 0, 32-63 >> 2, 64-95 >> 4, 96-127 >> 6.
    const __m512i shift_lo = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    const __m512i shift_hi =
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(4)), _mm256_set1_epi16(6), 1);
    float sum[kCols] = {};
    for (int64_t i = 0; i < nb; ++i) {
        const BlockQ6_K& b = x[i];
        prefetch_ahead(reinterpret_cast<const uint8_t*>(&b), sizeof(BlockQ6_K), end);
        // Scales as words, one per group, each in the low word of a 32-bit pair whose high word is 0.
        const __m256i sc16 = _mm256_cvtepi8_epi16(load128(b.scales));
        const __m512i sc_pairs = _mm512_cvtepu16_epi32(sc16);
        // Values 128c .. 128c + 63 (lo[c]) and 128c + 64 .. 128c + 127 (hi[c]), and their groups' scales.
        __m512i lo[2], hi[2], scale[4];
        for (int c = 0; c < 2; ++c) {
            const __m512i ql = _mm512_loadu_si512(b.ql + 64 * c);
            const __m512i qh = _mm512_broadcast_i64x4(load256(b.qh + 32 * c));
            lo[c] =
                _mm512_or_si512(_mm512_and_si512(ql, m4),
                                _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift_lo), m2), 4));
            hi[c] =
                _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift_hi), m2), 4));
        }
        for (int k = 0; k < 4; ++k)
            scale[k] = _mm512_permutexvar_epi16(_mm512_load_si512(kGroup[k].v), sc_pairs);
        uint16_t dh;
        std::memcpy(&dh, &b.d, sizeof dh);  // the block's last field: no wider load
        const float dd = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(dh)));
        for (int col = 0; col < kCols; ++col) {
            const BlockQ8_K& a = act[col][i];  // read as it is: the values in order and the group sums
            __m512i acc = _mm512_setzero_si512();
            for (int c = 0; c < 2; ++c) {
                const __m512i p_lo =
                    _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[c], _mm512_loadu_si512(a.qs + 128 * c));
                const __m512i p_hi = _mm512_dpbusd_epi32(_mm512_setzero_si512(), hi[c],
                                                         _mm512_loadu_si512(a.qs + 128 * c + 64));
                acc = _mm512_dpwssd_epi32(acc, p_lo, scale[2 * c]);
                acc = _mm512_dpwssd_epi32(acc, p_hi, scale[2 * c + 1]);
            }
            // 32 * sum over groups of scale * bsum, the offset of the unsigned values.
            const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(sc16, load256(a.bsums)), 5);
            const int32_t isum =
                _mm512_reduce_add_epi32(acc) - _mm512_reduce_add_epi32(_mm512_zextsi256_si512(corr));
            sum[col] = add_block_term(sum[col], a.d, dd, isum);
        }
    }
    for (int col = 0; col < kCols; ++col) out[col] = sum[col];
}

// ---------------------------------------------------------------------------------------------------
// IQ4_XS.

// The activation of one super-block in the weights' nibble layout: lo[h] bytes 16g + j = value
// 128h + 32g + j (the low nibbles of qs[64h + 16g + j]), hi[h] the same + 16 (the high nibbles); the
// sums of each group of 32, and d.
struct alignas(64) ActIQ4XS {
    __m512i lo[2], hi[2];
    __m256i group_sums;
    float d;
};

void prepare_act_iq4xs(ActIQ4XS* out, const BlockQ8_K* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i) {
        ActIQ4XS& a = out[i];
        for (int h = 0; h < 2; ++h) {
            const __m512i y0 = _mm512_loadu_si512(y[i].qs + 128 * h), y1 = _mm512_loadu_si512(y[i].qs + 128 * h + 64);
            a.lo[h] = _mm512_shuffle_i64x2(y0, y1, _MM_SHUFFLE(2, 0, 2, 0));
            a.hi[h] = _mm512_shuffle_i64x2(y0, y1, _MM_SHUFFLE(3, 1, 3, 1));
        }
        a.group_sums = _mm256_madd_epi16(load256(y[i].bsums), _mm256_set1_epi16(1));
        a.d = y[i].d;
    }
}

// One row's dot product: levels + 128 against the activation (vpdpbusd), each lane times its group's scale,
// the offset taken back as 128 * scale * group sum. The integer total is the reference's isum.
template <int kCols>
inline void iq4xs_row(const BlockIQ4_XS* x, const ActIQ4XS* const act[kCols], int64_t nb, const uint8_t* end,
                      float* out) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    const __m512i table = _mm512_broadcast_i32x4(load128(kIq4nlBiased));
    // Lane l of half h belongs to group 4h + l / 4.
    const __m512i group_of[2] = {_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                                 _mm512_setr_epi32(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7)};
    float sum[kCols] = {};
    for (int64_t i = 0; i < nb; ++i) {
        const BlockIQ4_XS& b = x[i];
        prefetch_ahead(reinterpret_cast<const uint8_t*>(&b), sizeof(BlockIQ4_XS), end);
        const __m256i sc = iq4xs_group_scales(b);
        __m512i lo[2], hi[2], scale[2];
        for (int h = 0; h < 2; ++h) {
            const __m512i q = _mm512_loadu_si512(b.qs + 64 * h);
            lo[h] = _mm512_shuffle_epi8(table, _mm512_and_si512(q, m4));
            hi[h] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4));
            scale[h] = _mm512_permutexvar_epi32(group_of[h], _mm512_castsi256_si512(sc));
        }
        const float dd = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(b.d)));
        for (int col = 0; col < kCols; ++col) {
            const ActIQ4XS& a = act[col][i];
            __m512i acc = _mm512_setzero_si512();
            for (int h = 0; h < 2; ++h) {
                const __m512i dp = _mm512_dpbusd_epi32(
                    _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[h], a.lo[h]), hi[h], a.hi[h]);
                acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(dp, scale[h]));
            }
            const __m256i corr = _mm256_slli_epi32(_mm256_mullo_epi32(sc, a.group_sums), 7);
            const int32_t isum =
                _mm512_reduce_add_epi32(acc) - _mm512_reduce_add_epi32(_mm512_zextsi256_si512(corr));
            sum[col] = add_block_term(sum[col], dd, a.d, isum);
        }
    }
    for (int col = 0; col < kCols; ++col) out[col] = sum[col];
}

// Rows of super-blocks against kCols activation columns: each column arranged once per call (Prepare) or
// read as it is (nullptr), then each row's dot products (`Row`: the row's blocks decoded once for all the
// columns, prefetching ahead within the call's rows).
template <class Block, class Act, void (*Prepare)(Act*, const BlockQ8_K*, int64_t), int kCols,
          void (*Row)(const Block*, const Act* const*, int64_t, const uint8_t*, float*)>
void decode_superblock_rows(int64_t n, float* s, size_t ldc, const void* vx, size_t bx, const void* vy,
                            size_t by, int nr) {
    const int64_t nb = n / QK_K;
    const Act* a[kCols];
    if constexpr (Prepare == nullptr) {  // the rows read the activation blocks as they are
        for (int col = 0; col < kCols; ++col)
            a[col] = reinterpret_cast<const Act*>(static_cast<const uint8_t*>(vy) + size_t(col) * by);
    } else {
        thread_local std::vector<Act> act;
        act.resize(size_t(kCols * nb));
        for (int col = 0; col < kCols; ++col) {
            Prepare(act.data() + col * nb,
                    reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(vy) + size_t(col) * by),
                    nb);
            a[col] = act.data() + col * nb;
        }
    }
    const auto* x = static_cast<const uint8_t*>(vx);
    const uint8_t* end = x + size_t(nr) * bx;
    for (int r = 0; r < nr; ++r) {
        float out[kCols];
        Row(reinterpret_cast<const Block*>(x + size_t(r) * bx), a, nb, end, out);
        for (int col = 0; col < kCols; ++col) s[size_t(col) * ldc + size_t(r)] = out[col];
    }
}

// nc columns, at most kMaxSuperblockDecodeColumns (2).
template <class Block, class Act, void (*Prepare)(Act*, const BlockQ8_K*, int64_t),
          void (*Row1)(const Block*, const Act* const*, int64_t, const uint8_t*, float*),
          void (*Row2)(const Block*, const Act* const*, int64_t, const uint8_t*, float*)>
void decode_superblock_columns(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y,
                               size_t by, int nr, int nc) {
    if (nc == 1) return decode_superblock_rows<Block, Act, Prepare, 1, Row1>(n, s, ldc, x, bx, y, by, nr);
    decode_superblock_rows<Block, Act, Prepare, 2, Row2>(n, s, ldc, x, bx, y, by, nr);
}

}  // namespace

namespace avx512 {
void decode_columns_q4_0(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                         int nr, int nc) {
    decode_blocks32_columns<Nibbles<18>>(n, s, ldc, x, bx, y, by, nr, nc);
}
void decode_columns_q4_1(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                         int nr, int nc) {
    decode_blocks32_columns<Nibbles<20>>(n, s, ldc, x, bx, y, by, nr, nc);
}
void decode_columns_iq4_nl(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y,
                           size_t by, int nr, int nc) {
    decode_blocks32_columns<Nibbles<18, true>>(n, s, ldc, x, bx, y, by, nr, nc);
}
void decode_columns_q5_0(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                         int nr, int nc) {
    decode_blocks32_columns<Bits5Nibbles<22>>(n, s, ldc, x, bx, y, by, nr, nc);
}
void decode_columns_q5_1(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                         int nr, int nc) {
    decode_blocks32_columns<Bits5Nibbles<24>>(n, s, ldc, x, bx, y, by, nr, nc);
}
void decode_columns_q8_0(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                         int nr, int nc) {
    decode_blocks32_columns<Bytes34>(n, s, ldc, x, bx, y, by, nr, nc);
}
void decode_columns_mxfp4(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                          int nr, int nc) {
    decode_blocks32_columns<Nibbles17>(n, s, ldc, x, bx, y, by, nr, nc);
}
#define GGML_DECODE_SUPERBLOCK_COLUMNS(name, Block, Act, prepare, row)                                   \
    void decode_columns_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, \
                               size_t by, int nr, int nc) {                                              \
        decode_superblock_columns<Block, Act, prepare, row<1>, row<2>>(n, s, ldc, x, bx, y, by, nr, nc); \
    }
template <int kCols>
void q4k_row(const BlockQ4_K* x, const ActQ4K* const* a, int64_t nb, const uint8_t* end, float* out) {
    k4_row<BlockQ4_K, false, kCols>(x, a, nb, end, out);
}
template <int kCols>
void q5k_row(const BlockQ5_K* x, const ActQ4K* const* a, int64_t nb, const uint8_t* end, float* out) {
    k4_row<BlockQ5_K, true, kCols>(x, a, nb, end, out);
}
GGML_DECODE_SUPERBLOCK_COLUMNS(q4_K, BlockQ4_K, ActQ4K, prepare_act_q4k, q4k_row)
GGML_DECODE_SUPERBLOCK_COLUMNS(q5_K, BlockQ5_K, ActQ4K, prepare_act_q4k, q5k_row)
GGML_DECODE_SUPERBLOCK_COLUMNS(q6_K, BlockQ6_K, BlockQ8_K, nullptr, q6k_row)
GGML_DECODE_SUPERBLOCK_COLUMNS(iq4_xs, BlockIQ4_XS, ActIQ4XS, prepare_act_iq4xs, iq4xs_row)
#undef GGML_DECODE_SUPERBLOCK_COLUMNS
}  // namespace avx512

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
