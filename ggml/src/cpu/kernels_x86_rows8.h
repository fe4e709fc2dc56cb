// Rows8: the same bytes of 8 weight rows transposed into the lanes of 256-bit vectors, and the byte
// operations of the decoders (kernels_x86_decode.h) on it, so one decoder serves a single row and an
// 8-row tile. Include inside a target region (see kernels_x86_vec.h for the rules).
#pragma once

#include "kernels_x86_decode.h"

namespace ggml::cpu {
namespace {

// The same 32 bytes of 8 rows, transposed: v[j] lane r holds bytes 4j .. 4j+3 of row r. The byte
// operations below act on it as their single-row versions act on one row's bytes.
struct Rows8 {
    __m256i v[8];
};

inline Rows8 shift_mask(const Rows8& a, int count, int8_t mask) {
    Rows8 r;
    for (int j = 0; j < 8; ++j) r.v[j] = shift_mask(a.v[j], count, mask);
    return r;
}

inline Rows8 operator|(const Rows8& a, const Rows8& b) {
    Rows8 r;
    for (int j = 0; j < 8; ++j) r.v[j] = _mm256_or_si256(a.v[j], b.v[j]);
    return r;
}

inline Rows8 shl_bytes(const Rows8& a, int n) {
    Rows8 r;
    for (int j = 0; j < 8; ++j) r.v[j] = _mm256_sll_epi16(a.v[j], _mm_cvtsi32_si128(n));
    return r;
}

inline Rows8 flip_sign_bits(const Rows8& a) {
    Rows8 r;
    for (int j = 0; j < 8; ++j) r.v[j] = flip_sign_bits(a.v[j]);
    return r;
}

inline Rows8 iq4nl_levels(const Rows8& nibbles) {
    Rows8 r;
    for (int j = 0; j < 8; ++j) r.v[j] = iq4nl_levels(nibbles.v[j]);
    return r;
}

inline Rows8 mxfp4_levels(const Rows8& nibbles) {
    Rows8 r;
    for (int j = 0; j < 8; ++j) r.v[j] = mxfp4_levels(nibbles.v[j]);
    return r;
}

// 16 bytes of 8 rows, transposed: v[j] lane r holds bytes 4j .. 4j+3 of row r.
struct Rows8x4 {
    __m256i v[4];
};

// As unpack_nibbles of one row: dword j < 4 takes the low nibbles of packed dword j, dword j + 4 the high.
inline Rows8 unpack_nibbles(const Rows8x4& q) {
    const __m256i m = _mm256_set1_epi8(0x0f);
    Rows8 r;
    for (int j = 0; j < 4; ++j) {
        r.v[j] = _mm256_and_si256(q.v[j], m);
        r.v[j + 4] = _mm256_and_si256(_mm256_srli_epi16(q.v[j], 4), m);
    }
    return r;
}

// A 32-bit word of each of 8 rows (lane r).
struct Words8 {
    __m256i v;
};

// As bits_to_0x10 of one row, for a word per row.
inline Rows8 bits_to_0x10(Words8 words) {
    Rows8 r;
    for (int j = 0; j < 8; ++j) {
        // Bits 4j .. 4j+3 to bits 0, 8, 16, 24 (the multiplier's terms never overlap), then to bit 4.
        const __m256i t = _mm256_and_si256(_mm256_srli_epi32(words.v, 4 * j), _mm256_set1_epi32(15));
        const __m256i spread = _mm256_and_si256(_mm256_mullo_epi32(t, _mm256_set1_epi32(0x00204081)),
                                                _mm256_set1_epi32(0x01010101));
        r.v[j] = _mm256_slli_epi32(spread, 4);
    }
    return r;
}

// The same block of 8 rows as a decoder source (see BlockBytes), its bytes transposed.
struct RowsBytes8 {
    const uint8_t* const* rows;  // the block in each row
    Rows8x4 bytes16(size_t offset) const {
        // z[a] holds rows a and a + 4 in its 128-bit lanes; 4x4 transposes within lanes keep rows in order.
        __m256i z[4], t[4];
        for (int a = 0; a < 4; ++a)
            z[a] = _mm256_set_m128i(load128(rows[a + 4] + offset), load128(rows[a] + offset));
        t[0] = _mm256_unpacklo_epi32(z[0], z[1]);
        t[1] = _mm256_unpackhi_epi32(z[0], z[1]);
        t[2] = _mm256_unpacklo_epi32(z[2], z[3]);
        t[3] = _mm256_unpackhi_epi32(z[2], z[3]);
        return Rows8x4{{_mm256_unpacklo_epi64(t[0], t[2]), _mm256_unpackhi_epi64(t[0], t[2]),
                        _mm256_unpacklo_epi64(t[1], t[3]), _mm256_unpackhi_epi64(t[1], t[3])}};
    }
    Rows8 bytes32(size_t offset) const {
        __m256i in[8];
        for (int t = 0; t < 8; ++t) in[t] = load256(rows[t] + offset);
        Rows8 r;
        transpose8x8_i32(in, r.v);
        return r;
    }
    Words8 word(size_t offset) const {
        int32_t w[8];
        for (int r = 0; r < 8; ++r) w[r] = load_i32(rows[r] + offset);
        return {_mm256_setr_epi32(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7])};
    }
};

}  // namespace
}  // namespace ggml::cpu
