// Rows16: the same bytes of 16 weight rows transposed into the lanes of 512-bit vectors, and the byte
// operations of the decoders (kernels_x86_decode.h) on it, so one decoder serves a single row and a
// 16-row tile. Include inside an AVX-512 target region (see kernels_x86_vec.h for the rules).
#pragma once

#include "kernels_x86_avx512.h"
#include "kernels_x86_decode.h"

namespace ggml::cpu {
namespace {

// The same 32 bytes of 16 rows, transposed: v[j] lane r holds bytes 4j .. 4j+3 of row r. The byte
// operations below act on it as their 256-bit versions act on one row's bytes.
struct Rows16 {
    __m512i v[8];
};

inline Rows16 shift_mask(const Rows16& a, int count, int8_t mask) {
    const __m128i c = _mm_cvtsi32_si128(count);
    const __m512i m = _mm512_set1_epi8(mask);
    Rows16 r;
    for (int j = 0; j < 8; ++j) r.v[j] = _mm512_and_si512(_mm512_srl_epi16(a.v[j], c), m);
    return r;
}

inline Rows16 operator|(const Rows16& a, const Rows16& b) {
    Rows16 r;
    for (int j = 0; j < 8; ++j) r.v[j] = _mm512_or_si512(a.v[j], b.v[j]);
    return r;
}

inline Rows16 shl_bytes(const Rows16& a, int n) {
    Rows16 r;
    for (int j = 0; j < 8; ++j) r.v[j] = _mm512_sll_epi16(a.v[j], _mm_cvtsi32_si128(n));
    return r;
}

inline Rows16 flip_sign_bits(const Rows16& a) {
    Rows16 r;
    for (int j = 0; j < 8; ++j) r.v[j] = _mm512_xor_si512(a.v[j], _mm512_set1_epi8(-128));
    return r;
}

inline Rows16 iq4nl_levels(const Rows16& nibbles) {
    const __m512i table = _mm512_broadcast_i32x4(load128(kIq4nlBiased));
    Rows16 r;
    for (int j = 0; j < 8; ++j) r.v[j] = _mm512_shuffle_epi8(table, nibbles.v[j]);
    return r;
}

inline Rows16 mxfp4_levels(const Rows16& nibbles) {
    const __m512i table = _mm512_broadcast_i32x4(load128(kMxfp4Biased));
    Rows16 r;
    for (int j = 0; j < 8; ++j) r.v[j] = _mm512_shuffle_epi8(table, nibbles.v[j]);
    return r;
}

// 16 bytes of 16 rows, transposed: v[j] lane r holds bytes 4j .. 4j+3 of row r.
struct Rows16x4 {
    __m512i v[4];
};

// As unpack_nibbles of one row: dword j < 4 takes the low nibbles of packed dword j, dword j + 4 the high.
inline Rows16 unpack_nibbles(const Rows16x4& q) {
    const __m512i m = _mm512_set1_epi8(0x0f);
    Rows16 r;
    for (int j = 0; j < 4; ++j) {
        r.v[j] = _mm512_and_si512(q.v[j], m);
        r.v[j + 4] = _mm512_and_si512(_mm512_srli_epi16(q.v[j], 4), m);
    }
    return r;
}

// Half h (bytes 16h .. 16h + 15 of each row) of a 32-byte piece.
inline Rows16x4 half16(const Rows16& v, int h) {
    return Rows16x4{{v.v[4 * h], v.v[4 * h + 1], v.v[4 * h + 2], v.v[4 * h + 3]}};
}

// Bits 0-3 of t spread to bit 4 of bytes 0-3.
constexpr uint32_t spread_0x10(uint32_t t) {
    return ((t & 1) << 4) | ((t & 2) << 11) | ((t & 4) << 18) | ((t & 8) << 25);
}

// A 32-bit word of each of 16 rows (lane r).
struct Words16 {
    __m512i v;
};

// As bits_to_0x10 of one row, for a word per row.
inline Rows16 bits_to_0x10(Words16 words) {
    const __m512i bits = words.v;
    alignas(64) static constexpr uint32_t kSpread[16] = {
        spread_0x10(0),  spread_0x10(1),  spread_0x10(2),  spread_0x10(3), spread_0x10(4),  spread_0x10(5),
        spread_0x10(6),  spread_0x10(7),  spread_0x10(8),  spread_0x10(9), spread_0x10(10), spread_0x10(11),
        spread_0x10(12), spread_0x10(13), spread_0x10(14), spread_0x10(15)};
    const __m512i table = _mm512_load_si512(kSpread);
    Rows16 r;
    // vpermd looks up the low 4 bits of each lane: bits 4j .. 4j+3 give dword j.
    for (int j = 0; j < 8; ++j) r.v[j] = _mm512_permutexvar_epi32(_mm512_srli_epi32(bits, 4 * j), table);
    return r;
}

// Rows16 of the 32 bytes at `offset` of 16 rows.
inline Rows16 transpose_rows16(const uint8_t* const rows[16], size_t offset) {
    __m256i in[16];
    for (int t = 0; t < 16; ++t) in[t] = load256(rows[t] + offset);
    Rows16 r;
    transpose16x8_i32(in, r.v);
    return r;
}

// The same block of 16 rows as a decoder source (see BlockBytes), its bytes transposed.
struct RowsBytes16 {
    const uint8_t* const* rows;  // the block in each row
    Rows16x4 bytes16(size_t offset) const {
        // z[a] holds rows a, a + 4, a + 8, a + 12 in its 128-bit lanes; 4x4 transposes within lanes then
        // leave rows in order.
        __m512i z[4], t[4];
        for (int a = 0; a < 4; ++a) {
            z[a] = _mm512_castsi128_si512(load128(rows[a] + offset));
            z[a] = _mm512_inserti32x4(z[a], load128(rows[a + 4] + offset), 1);
            z[a] = _mm512_inserti32x4(z[a], load128(rows[a + 8] + offset), 2);
            z[a] = _mm512_inserti32x4(z[a], load128(rows[a + 12] + offset), 3);
        }
        t[0] = _mm512_unpacklo_epi32(z[0], z[1]);
        t[1] = _mm512_unpackhi_epi32(z[0], z[1]);
        t[2] = _mm512_unpacklo_epi32(z[2], z[3]);
        t[3] = _mm512_unpackhi_epi32(z[2], z[3]);
        return Rows16x4{{_mm512_unpacklo_epi64(t[0], t[2]), _mm512_unpackhi_epi64(t[0], t[2]),
                         _mm512_unpacklo_epi64(t[1], t[3]), _mm512_unpackhi_epi64(t[1], t[3])}};
    }
    Rows16 bytes32(size_t offset) const { return transpose_rows16(rows, offset); }
    Words16 word(size_t offset) const {
        int32_t w[16];
        for (int r = 0; r < 16; ++r) w[r] = load_i32(rows[r] + offset);
        return {_mm512_setr_epi32(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11],
                                  w[12], w[13], w[14], w[15])};
    }
};

}  // namespace
}  // namespace ggml::cpu
