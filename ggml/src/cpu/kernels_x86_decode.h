// Unpacking of weight blocks into bytes, 32 values at a time in value order, for the AVX2 and AVX-512
// kernels. Include inside a target region (see kernels_x86_vec.h), after "ggml/quants.h".
//
// 32-value formats (activation Q8_0 or Q8_1): quants(src) gives unsigned bytes u = level + kOffset, so the
// block's integer sum is sum(u * y) - kOffset * sum(y) for any unsigned-by-signed byte product.
// K-quants (activation Q8_K): quants(src, k) gives the unsigned levels q of values 32k .. 32k + 31
// (the value is d * sc * (q - kLevelOffset) [- dmin * min]), and scales() the int16 multipliers of each
// group of 16 values: isum = sum_g sc[g] * sum(q * y over g) + sum_g cor[g] * bsums[g] for formats
// without mins; with mins, cor holds the mins and the second sum is the reference's imins.
#pragma once

#include "kernels_x86_vec.h"

namespace ggml::cpu {
namespace {

// A decoder reads its block through a source: src.bytes16(offset) and src.bytes32(offset) give the 16
// or 32 bytes at that byte offset of the block, src.word(offset) a little-endian uint32. For one block
// (BlockBytes) these are plain vectors; tiles pass the same bytes of many rows transposed, with
// overloads of the byte operations used here (unpack_nibbles, bits_to_0x10, operator|, shift_mask,
// shl_bytes, flip_sign_bits, iq4nl_levels).
struct BlockBytes {
    const uint8_t* p;
    template <class Block>
    explicit BlockBytes(const Block& b) : p(reinterpret_cast<const uint8_t*>(&b)) {}
    __m128i bytes16(size_t offset) const { return load128(p + offset); }
    __m256i bytes32(size_t offset) const { return load256(p + offset); }
    uint32_t word(size_t offset) const { return uint32_t(load_i32(p + offset)); }
};

// 16 packed bytes -> 32 nibbles: byte j low nibble is value j, high nibble value j + 16.
inline __m256i unpack_nibbles(__m128i q) {
    const __m128i m = _mm_set1_epi8(0x0f);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m));
}

// Byte j is 0x10 where bit j of bits is set.
inline __m256i bits_to_0x10(uint32_t bits) {
    const __m256i which = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2,
                                           2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
    const __m256i v = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32(int32_t(bits)), which), bit);
    return _mm256_and_si256(_mm256_cmpeq_epi8(v, bit), _mm256_set1_epi8(0x10));
}

// Bytes of v shifted right by `count` bits, keeping the bits of `mask`.
inline __m256i shift_mask(__m256i v, int count, int8_t mask) {
    return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(count)), _mm256_set1_epi8(mask));
}

// Signed bytes + 128, as unsigned bytes.
inline __m256i flip_sign_bits(__m256i v) {
    return _mm256_xor_si256(v, _mm256_set1_epi8(-128));
}

// The 16 IQ4_NL levels + 128, for byte lookups by nibble.
alignas(16) constexpr uint8_t kIq4nlBiased[16] = {
    uint8_t(kIq4nlValues[0] + 128),  uint8_t(kIq4nlValues[1] + 128),  uint8_t(kIq4nlValues[2] + 128),
    uint8_t(kIq4nlValues[3] + 128),  uint8_t(kIq4nlValues[4] + 128),  uint8_t(kIq4nlValues[5] + 128),
    uint8_t(kIq4nlValues[6] + 128),  uint8_t(kIq4nlValues[7] + 128),  uint8_t(kIq4nlValues[8] + 128),
    uint8_t(kIq4nlValues[9] + 128),  uint8_t(kIq4nlValues[10] + 128), uint8_t(kIq4nlValues[11] + 128),
    uint8_t(kIq4nlValues[12] + 128), uint8_t(kIq4nlValues[13] + 128), uint8_t(kIq4nlValues[14] + 128),
    uint8_t(kIq4nlValues[15] + 128)};

inline __m256i iq4nl_levels(__m256i nibbles) {
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(load128(kIq4nlBiased)), nibbles);
}

// The 16 MXFP4 levels (E2M1 values doubled, iq::kMxfp4Values) + 128, for byte lookups by nibble.
alignas(16) constexpr uint8_t kMxfp4Biased[16] = {
    uint8_t(iq::kMxfp4Values[0] + 128),  uint8_t(iq::kMxfp4Values[1] + 128),
    uint8_t(iq::kMxfp4Values[2] + 128),  uint8_t(iq::kMxfp4Values[3] + 128),
    uint8_t(iq::kMxfp4Values[4] + 128),  uint8_t(iq::kMxfp4Values[5] + 128),
    uint8_t(iq::kMxfp4Values[6] + 128),  uint8_t(iq::kMxfp4Values[7] + 128),
    uint8_t(iq::kMxfp4Values[8] + 128),  uint8_t(iq::kMxfp4Values[9] + 128),
    uint8_t(iq::kMxfp4Values[10] + 128), uint8_t(iq::kMxfp4Values[11] + 128),
    uint8_t(iq::kMxfp4Values[12] + 128), uint8_t(iq::kMxfp4Values[13] + 128),
    uint8_t(iq::kMxfp4Values[14] + 128), uint8_t(iq::kMxfp4Values[15] + 128)};

inline __m256i mxfp4_levels(__m256i nibbles) {
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(load128(kMxfp4Biased)), nibbles);
}

// A decoder whose blocks carry an E8M0 exponent `e` (the scale 2^(e - 128), mxfp4_half_scale) where the
// others carry an f16 `d`.
template <class D>
constexpr bool kE8M0Scale = requires {
    D::kE8M0;
};

// The weight scales of the `count` consecutive blocks at x (at most 8), as floats.
template <class D>
inline __m256 block_scales8(const typename D::Block* x, int count) {
    if constexpr (kE8M0Scale<D>) {
        alignas(32) float e[8] = {};
        for (int k = 0; k < count; ++k) e[k] = mxfp4_half_scale(x[k].e);
        return _mm256_load_ps(e);
    } else {
        return halves8(&x->d, sizeof(typename D::Block), count);
    }
}

struct DecodeQ4_0 {
    using Block = BlockQ4_0;
    using Act = BlockQ8_0;
    static constexpr int kOffset = 8, kMaxU = 15;
    static constexpr bool kHasMin = false;
    template <class Src>
    static auto quants(const Src& src) {
        return unpack_nibbles(src.bytes16(offsetof(Block, qs)));
    }
};

struct DecodeQ4_1 {
    using Block = BlockQ4_1;
    using Act = BlockQ8_1;
    static constexpr int kOffset = 0, kMaxU = 15;
    static constexpr bool kHasMin = true;
    template <class Src>
    static auto quants(const Src& src) {
        return unpack_nibbles(src.bytes16(offsetof(Block, qs)));
    }
};

struct DecodeQ5_0 {
    using Block = BlockQ5_0;
    using Act = BlockQ8_0;
    static constexpr int kOffset = 16, kMaxU = 31;
    static constexpr bool kHasMin = false;
    template <class Src>
    static auto quants(const Src& src) {
        return unpack_nibbles(src.bytes16(offsetof(Block, qs))) | bits_to_0x10(src.word(offsetof(Block, qh)));
    }
};

struct DecodeQ5_1 {
    using Block = BlockQ5_1;
    using Act = BlockQ8_1;
    static constexpr int kOffset = 0, kMaxU = 31;
    static constexpr bool kHasMin = true;
    template <class Src>
    static auto quants(const Src& src) {
        return unpack_nibbles(src.bytes16(offsetof(Block, qs))) | bits_to_0x10(src.word(offsetof(Block, qh)));
    }
};

struct DecodeQ8_0 {
    using Block = BlockQ8_0;
    using Act = BlockQ8_0;
    static constexpr int kOffset = 128, kMaxU = 255;
    static constexpr bool kHasMin = false;
    template <class Src>
    static auto quants(const Src& src) {
        return flip_sign_bits(src.bytes32(offsetof(Block, qs)));
    }
};

struct DecodeIQ4_NL {
    using Block = BlockIQ4_NL;
    using Act = BlockQ8_0;
    static constexpr int kOffset = 128, kMaxU = 255;
    static constexpr bool kHasMin = false;
    template <class Src>
    static auto quants(const Src& src) {
        return iq4nl_levels(unpack_nibbles(src.bytes16(offsetof(Block, qs))));
    }
};

// MXFP4: IQ4_NL's nibbles with MXFP4's level table, under an E8M0 scale (kE8M0).
struct DecodeMXFP4 {
    using Block = BlockMXFP4;
    using Act = BlockQ8_0;
    static constexpr int kOffset = 128, kMaxU = 255;
    static constexpr bool kHasMin = false;
    static constexpr bool kE8M0 = true;
    template <class Src>
    static auto quants(const Src& src) {
        return mxfp4_levels(unpack_nibbles(src.bytes16(offsetof(Block, qs))));
    }
};

// The K-quant decoders read only src.bytes32(offset), all inside [kPiecesBegin, kPiecesEnd).

// Bytes shifted left by n bits, for bytes whose set bits stay inside them (1- and 2-bit fields here).
inline __m256i shl_bytes(__m256i v, int n) {
    return _mm256_slli_epi16(v, n);
}

// Bytes b0..b15 (low to high) of four little-endian words.
inline __m128i words_to_bytes(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    return _mm_setr_epi32(int32_t(a), int32_t(b), int32_t(c), int32_t(d));
}

// 16 signed bytes as 16 int16, and the product of each with a constant.
inline __m256i widen_i8(__m128i v) {
    return _mm256_cvtepi8_epi16(v);
}
inline __m256i times(__m256i v, int16_t k) {
    return _mm256_mullo_epi16(v, _mm256_set1_epi16(k));
}

struct DecodeQ2_K {
    using Block = BlockQ2_K;
    static constexpr bool kHasMins = true;
    static constexpr int kMaxU = 3, kGroup = 16, kLevelOffset = 0;
    static constexpr int kPiecesBegin = offsetof(Block, qs), kPiecesEnd = offsetof(Block, qs) + 64;
    // Value 128c + 32g + l is bits 2g, 2g+1 of qs[32c + l].
    template <class Src>
    static auto quants(const Src& src, int k) {
        return shift_mask(src.bytes32(offsetof(Block, qs) + 32 * (k / 4)), 2 * (k % 4), 3);
    }
    // Scales and mins of the 16 groups as int16 (4 bits each).
    static void scales(const Block& b, __m256i* sc, __m256i* cor) {
        const __m128i v = load128(b.scales), m = _mm_set1_epi8(15);
        *sc = _mm256_cvtepu8_epi16(_mm_and_si128(v, m));
        *cor = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(v, 4), m));
    }
};

struct DecodeQ3_K {
    using Block = BlockQ3_K;
    static constexpr bool kHasMins = false;
    static constexpr int kMaxU = 7, kGroup = 16, kLevelOffset = 4;
    static constexpr int kPiecesBegin = offsetof(Block, hmask), kPiecesEnd = offsetof(Block, qs) + 64;
    // Low bits as in Q2_K; bit 2 of value 32k + l is bit k of hmask[l]. Level = q - 4.
    template <class Src>
    static auto quants(const Src& src, int k) {
        const auto low = shift_mask(src.bytes32(offsetof(Block, qs) + 32 * (k / 4)), 2 * (k % 4), 3);
        return low | shl_bytes(shift_mask(src.bytes32(offsetof(Block, hmask)), k, 1), 2);
    }
    // The 6-bit scales (see unpack_q3_k_scales): low nibbles in bytes 0-7, top bits in bytes 8-11.
    static void scales(const Block& b, __m256i* sc, __m256i* cor) {
        uint32_t a[3];
        std::memcpy(a, b.scales, sizeof a);
        const uint32_t lo = 0x0f0f0f0f, hi = 0x03030303;
        const __m128i u = words_to_bytes(
            (a[0] & lo) | ((a[2] & hi) << 4), (a[1] & lo) | (((a[2] >> 2) & hi) << 4),
            ((a[0] >> 4) & lo) | (((a[2] >> 4) & hi) << 4), ((a[1] >> 4) & lo) | (((a[2] >> 6) & hi) << 4));
        *sc = widen_i8(_mm_sub_epi8(u, _mm_set1_epi8(32)));
        *cor = times(*sc, -4);
    }
};

// Q4_K/Q5_K scales: 8 scales and 8 mins of 6 bits (see unpack_k4_scales), each for 2 groups of 16.
inline void k4_scales(const uint8_t packed[K_SCALE_SIZE], __m256i* sc, __m256i* cor) {
    uint32_t a[3];
    std::memcpy(a, packed, sizeof a);
    const uint32_t six = 0x3f3f3f3f, lo = 0x0f0f0f0f, hi = 0x03030303;
    const __m128i u = words_to_bytes(a[0] & six, (a[2] & lo) | (((a[0] >> 6) & hi) << 4), a[1] & six,
                                     ((a[2] >> 4) & lo) | (((a[1] >> 6) & hi) << 4));
    *sc = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(u, u));  // scale j for groups 2j and 2j + 1
    *cor = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(u, u));
}

struct DecodeQ4_K {
    using Block = BlockQ4_K;
    static constexpr bool kHasMins = true;
    static constexpr int kMaxU = 15, kGroup = 32, kLevelOffset = 0;
    static constexpr int kPiecesBegin = offsetof(Block, qs), kPiecesEnd = sizeof(Block);
    // Values 64c + l and 64c + 32 + l are the low and high nibbles of qs[32c + l].
    template <class Src>
    static auto quants(const Src& src, int k) {
        return shift_mask(src.bytes32(offsetof(Block, qs) + 32 * (k / 2)), 4 * (k % 2), 15);
    }
    static void scales(const Block& b, __m256i* sc, __m256i* cor) { k4_scales(b.scales, sc, cor); }
};

struct DecodeQ5_K {
    using Block = BlockQ5_K;
    static constexpr bool kHasMins = true;
    static constexpr int kMaxU = 31, kGroup = 32, kLevelOffset = 0;
    static constexpr int kPiecesBegin = offsetof(Block, qh), kPiecesEnd = sizeof(Block);
    // As Q4_K plus bit 4 of value 32k + l in bit k of qh[l].
    template <class Src>
    static auto quants(const Src& src, int k) {
        const auto low = shift_mask(src.bytes32(offsetof(Block, qs) + 32 * (k / 2)), 4 * (k % 2), 15);
        return low | shl_bytes(shift_mask(src.bytes32(offsetof(Block, qh)), k, 1), 4);
    }
    static void scales(const Block& b, __m256i* sc, __m256i* cor) { k4_scales(b.scales, sc, cor); }
};

struct DecodeQ6_K {
    using Block = BlockQ6_K;
    static constexpr bool kHasMins = false;
    static constexpr int kMaxU = 63, kGroup = 16, kLevelOffset = 32;
    static constexpr int kPiecesBegin = offsetof(Block, ql), kPiecesEnd = offsetof(Block, qh) + 64;
    // Value 128c + 32g + l: nibble of ql[64c + 32(g & 1) + l] (low for g < 2), bits 4-5 from
    // bits 2g, 2g+1 of qh[32c + l]. Level = q - 32.
    template <class Src>
    static auto quants(const Src& src, int k) {
        const int c = k / 4, g = k % 4;
        const auto low =
            shift_mask(src.bytes32(offsetof(Block, ql) + 64 * c + 32 * (g & 1)), g < 2 ? 0 : 4, 15);
        return low | shl_bytes(shift_mask(src.bytes32(offsetof(Block, qh) + 32 * c), 2 * g, 3), 4);
    }
    static void scales(const Block& b, __m256i* sc, __m256i* cor) {
        *sc = widen_i8(load128(b.scales));
        *cor = times(*sc, -32);
    }
};

// Half h (bytes 16h .. 16h + 15) of a 32-byte piece.
inline __m128i half16(const __m256i& v, int h) {
    return h ? _mm256_extracti128_si256(v, 1) : _mm256_castsi256_si128(v);
}

// IQ4_XS's 8 group scales (6 bits: 4 from scales_l, 2 from scales_h, minus 32) as int32 lanes.
inline __m256i iq4xs_group_scales(const BlockIQ4_XS& b) {
    uint32_t low;
    std::memcpy(&low, b.scales_l, sizeof low);
    const __m256i lo = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(int32_t(low)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
        _mm256_set1_epi32(15));
    const __m256i hi = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(b.scales_h), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
        _mm256_set1_epi32(3));
    return _mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), _mm256_set1_epi32(32));
}

// IQ4_XS: 8 groups of 32, IQ4_NL's levels by nibble (group g: qs[16g + j] low nibble is value 32g + j, high
// 32g + 16 + j) under 6-bit group scales ls - 32. Read as a K-quant without mins whose levels carry the
// offset 128, taken back through bsums.
struct DecodeIQ4_XS {
    using Block = BlockIQ4_XS;
    static constexpr bool kHasMins = false;
    static constexpr int kMaxU = 255, kGroup = 32, kLevelOffset = 128;
    static constexpr int kPiecesBegin = offsetof(Block, qs), kPiecesEnd = sizeof(Block);
    template <class Src>
    static auto quants(const Src& src, int k) {
        return iq4nl_levels(unpack_nibbles(half16(src.bytes32(offsetof(Block, qs) + 32 * (k / 2)), k % 2)));
    }
    // Group g's scale for both of its 16-value halves; -128 times it for their bsums.
    static void scales(const Block& b, __m256i* sc, __m256i* cor) {
        const __m256i sc32 = iq4xs_group_scales(b);
        // int32 lane g -> int16 words 2g and 2g + 1
        const __m256i words = _mm256_or_si256(_mm256_and_si256(sc32, _mm256_set1_epi32(0xffff)),
                                              _mm256_slli_epi32(sc32, 16));
        *sc = words;
        *cor = times(words, -128);
    }
};

}  // namespace
}  // namespace ggml::cpu
