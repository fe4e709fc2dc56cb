// Block layouts: field offsets as in GGUF, and hand-built blocks that dequantize (and dot) to values
// worked out by hand.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cmath>
#include <cstring>
#include <vector>

#include "ggml/quants.h"
#include "test_data.h"

using namespace ggml;

// Field offsets of the GGUF block structs (sizes are asserted in quants.h).
static_assert(offsetof(BlockQ4_1, m) == 2 && offsetof(BlockQ4_1, qs) == 4);
static_assert(offsetof(BlockQ5_0, qh) == 2 && offsetof(BlockQ5_0, qs) == 6);
static_assert(offsetof(BlockQ5_1, qh) == 4 && offsetof(BlockQ5_1, qs) == 8);
static_assert(offsetof(BlockQ8_1, s) == 2 && offsetof(BlockQ8_1, qs) == 4);
static_assert(offsetof(BlockQ2_K, qs) == 16 && offsetof(BlockQ2_K, d) == 80 &&
              offsetof(BlockQ2_K, dmin) == 82);
static_assert(offsetof(BlockQ3_K, qs) == 32 && offsetof(BlockQ3_K, scales) == 96 &&
              offsetof(BlockQ3_K, d) == 108);
static_assert(offsetof(BlockQ4_K, dmin) == 2 && offsetof(BlockQ4_K, scales) == 4 &&
              offsetof(BlockQ4_K, qs) == 16);
static_assert(offsetof(BlockQ5_K, scales) == 4 && offsetof(BlockQ5_K, qh) == 16 &&
              offsetof(BlockQ5_K, qs) == 48);
static_assert(offsetof(BlockQ6_K, qh) == 128 && offsetof(BlockQ6_K, scales) == 192 &&
              offsetof(BlockQ6_K, d) == 208);
static_assert(offsetof(BlockQ8_K, qs) == 4 && offsetof(BlockQ8_K, bsums) == 260);
static_assert(offsetof(BlockIQ4_XS, scales_h) == 2 && offsetof(BlockIQ4_XS, scales_l) == 4 &&
              offsetof(BlockIQ4_XS, qs) == 8);
static_assert(offsetof(BlockIQ2_XXS, qs) == 2);
static_assert(offsetof(BlockIQ2_XS, qs) == 2 && offsetof(BlockIQ2_XS, scales) == 66);
static_assert(offsetof(BlockIQ2_S, qs) == 2 && offsetof(BlockIQ2_S, qh) == 66 && offsetof(BlockIQ2_S, scales) == 74);
static_assert(offsetof(BlockIQ3_XXS, qs) == 2);
static_assert(offsetof(BlockIQ3_S, qs) == 2 && offsetof(BlockIQ3_S, qh) == 66 && offsetof(BlockIQ3_S, signs) == 74 &&
              offsetof(BlockIQ3_S, scales) == 106);
static_assert(offsetof(BlockIQ1_S, qs) == 2 && offsetof(BlockIQ1_S, qh) == 34);
static_assert(offsetof(BlockIQ1_M, qh) == 32 && offsetof(BlockIQ1_M, scales) == 48);
static_assert(offsetof(BlockTQ1_0, qh) == 48 && offsetof(BlockTQ1_0, d) == 52);
static_assert(offsetof(BlockTQ2_0, d) == 64);
static_assert(offsetof(BlockMXFP4, qs) == 1);

namespace {

constexpr fp16_t kHalfQuarter = 0x3400;   // 0.25
constexpr fp16_t kHalfHalf = 0x3800;      // 0.5
constexpr fp16_t kHalfOne = 0x3c00;       // 1.0
constexpr fp16_t kHalfTwo = 0x4000;       // 2.0
constexpr fp16_t kHalfMinusOne = 0xbc00;  // -1.0

template <typename Block>
Block zeroed() {
    Block b;
    std::memset(&b, 0, sizeof b);
    return b;
}

// A Q8_K block of all ones, so a dot product returns the sum of the weights.
BlockQ8_K q8k_ones() {
    auto y = zeroed<BlockQ8_K>();
    y.d = 1.0f;
    std::memset(y.qs, 1, sizeof y.qs);
    for (auto& s : y.bsums) s = 16;
    return y;
}

}  // namespace

TEST_CASE("Q4_0 block with d = 0.5 and known nibbles", "[layout]") {
    auto b = zeroed<BlockQ4_0>();
    b.d = kHalfHalf;
    for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | ((15 - j) << 4));
    float y[32];
    dequantize_row_q4_0(&b, y, 32);
    CHECK(y[0] == -4.0f);  // (0 - 8) * 0.5
    CHECK(y[8] == 0.0f);
    CHECK(y[15] == 3.5f);
    CHECK(y[16] == 3.5f);  // high nibble of byte 0 is 15
    CHECK(y[31] == -4.0f);
    // Against activations of all ones (d = 1): 0.5 * sum(q - 8) = 0.5 * 16 * (-1).
    auto a = zeroed<BlockQ8_0>();
    a.d = kHalfOne;
    std::memset(a.qs, 1, sizeof a.qs);
    float s = 0;
    vec_dot_q4_0_q8_0_ref(32, &s, &b, &a);
    CHECK(s == -8.0f);
}

TEST_CASE("Q4_1 block dequantizes to d * q + m and dots with s", "[layout]") {
    auto b = zeroed<BlockQ4_1>();
    b.d = kHalfQuarter;
    b.m = kHalfMinusOne;
    for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | (j << 4));
    float y[32];
    dequantize_row_q4_1(&b, y, 32);
    CHECK(y[0] == -1.0f);
    CHECK(y[5] == 0.25f);
    CHECK(y[15] == 2.75f);
    CHECK(y[31] == 2.75f);
    // Activations 0.5 * 2 = 1 everywhere, s = 0.5 * 64 = 32: sum of the weights = 2 * (30 - 16).
    auto a = zeroed<BlockQ8_1>();
    a.d = kHalfHalf;
    a.s = 0x5000;  // 32.0
    std::memset(a.qs, 2, sizeof a.qs);
    float s = 0;
    vec_dot_q4_1_q8_1_ref(32, &s, &b, &a);
    CHECK(s == 28.0f);
}

TEST_CASE("Q5_0 and Q5_1 take the fifth bit of value j from bit j of qh", "[layout]") {
    auto b = zeroed<BlockQ5_0>();
    b.d = kHalfOne;
    for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | (j << 4));
    const uint8_t qh[4] = {0xff, 0x00, 0x0f, 0xf0};  // values 0-7, 16-19 and 28-31 have the bit
    std::memcpy(b.qh, qh, 4);
    float y[32];
    dequantize_row_q5_0(&b, y, 32);
    CHECK(y[0] == 0.0f);
    CHECK(y[7] == 7.0f);
    CHECK(y[8] == -8.0f);
    CHECK(y[15] == -1.0f);
    CHECK(y[16] == 0.0f);
    CHECK(y[19] == 3.0f);
    CHECK(y[20] == -12.0f);
    CHECK(y[28] == 12.0f);
    CHECK(y[31] == 15.0f);

    auto c = zeroed<BlockQ5_1>();
    c.d = kHalfHalf;
    c.m = kHalfTwo;
    std::memcpy(c.qs, b.qs, 16);
    std::memcpy(c.qh, qh, 4);
    dequantize_row_q5_1(&c, y, 32);
    CHECK(y[0] == 10.0f);  // 0.5 * 16 + 2
    CHECK(y[8] == 6.0f);
    CHECK(y[31] == 17.5f);
}

TEST_CASE("Q8_0 and Q8_K blocks dequantize to d * q", "[layout]") {
    auto b = zeroed<BlockQ8_0>();
    b.d = kHalfQuarter;
    for (int j = 0; j < 32; ++j) b.qs[j] = int8_t(j - 16);
    float y[256];
    dequantize_row_q8_0(&b, y, 32);
    CHECK(y[0] == -4.0f);
    CHECK(y[31] == 3.75f);

    auto k = zeroed<BlockQ8_K>();
    k.d = 0.5f;
    for (int j = 0; j < 256; ++j) k.qs[j] = int8_t(j - 128);
    dequantize_row_q8_K(&k, y, 256);
    CHECK(y[0] == -64.0f);
    CHECK(y[255] == 63.5f);
}

TEST_CASE("Q2_K block with known scales, mins and 2-bit quants", "[layout]") {
    auto b = zeroed<BlockQ2_K>();
    b.d = kHalfOne;
    b.dmin = kHalfHalf;
    b.scales[0] = 0x21;  // sub-block 0: scale 1, min 2
    b.scales[2] = 0x03;  // sub-block 2: scale 3, min 0
    b.scales[4] = 0x15;  // sub-block 4: scale 5, min 1
    b.scales[6] = 0xf7;  // sub-block 6: scale 7, min 15
    b.scales[8] = 0x02;  // sub-block 8: scale 2, min 0
    b.qs[0] = 0xe4;      // values 0, 32, 64, 96 have quants 0, 1, 2, 3
    b.qs[32] = 0x03;     // value 128 has quant 3
    float y[256];
    dequantize_row_q2_K(&b, y, 256);
    CHECK(y[0] == -1.0f);  // 1 * 0 - 0.5 * 2
    CHECK(y[1] == -1.0f);
    CHECK(y[16] == 0.0f);
    CHECK(y[32] == 3.0f);   // 3 * 1
    CHECK(y[64] == 9.5f);   // 5 * 2 - 0.5
    CHECK(y[96] == 13.5f);  // 7 * 3 - 7.5
    CHECK(y[97] == -7.5f);
    CHECK(y[128] == 6.0f);  // 2 * 3
    // Sum of all weights: -16 + 3 + (9.5 - 7.5) + (13.5 - 112.5) + 6.
    const BlockQ8_K ones = q8k_ones();
    float s = 0;
    vec_dot_q2_K_q8_K_ref(256, &s, &b, &ones);
    CHECK(s == -104.0f);
}

TEST_CASE("Q3_K block with known packed 6-bit scales", "[layout]") {
    // Scales 1, -3, 31 and -32 at sub-blocks 0, 2, 4, 8, the rest 0; stored as scale + 32.
    const uint8_t packed[12] = {0x01, 0x00, 0x0d, 0x00, 0x0f, 0x00, 0x00, 0x00, 0x8e, 0xaa, 0xa9, 0xaa};
    int8_t sc[16];
    unpack_q3_k_scales(packed, sc);
    const int8_t expect[16] = {1, 0, -3, 0, 31, 0, 0, 0, -32, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < 16; ++j) CHECK(sc[j] == expect[j]);
    uint8_t repacked[12];
    pack_q3_k_scales(expect, repacked);
    CHECK(std::memcmp(repacked, packed, 12) == 0);

    auto b = zeroed<BlockQ3_K>();
    b.d = kHalfHalf;
    std::memcpy(b.scales, packed, 12);
    b.qs[0] = 0x27;     // low bits of values 0, 32, 64, 96: 3, 1, 2, 0
    b.hmask[0] = 0x05;  // high bit set for values 0 and 64
    float y[256];
    dequantize_row_q3_K(&b, y, 256);
    CHECK(y[0] == 1.5f);     // 0.5 * 1 * (7 - 4)
    CHECK(y[1] == -2.0f);    // 0.5 * 1 * (0 - 4)
    CHECK(y[16] == 0.0f);    // scale 0
    CHECK(y[32] == 4.5f);    // 0.5 * -3 * (1 - 4)
    CHECK(y[64] == 31.0f);   // 0.5 * 31 * (6 - 4)
    CHECK(y[128] == 64.0f);  // 0.5 * -32 * (0 - 4)
}

TEST_CASE("Q4_K and Q5_K blocks with known 6-bit scales and mins", "[layout]") {
    const uint8_t sc[8] = {1, 2, 3, 4, 33, 34, 35, 63};
    const uint8_t mn[8] = {0, 1, 2, 3, 40, 41, 42, 63};
    const uint8_t packed[12] = {0x81, 0x82, 0x83, 0xc4, 0x80, 0x81, 0x82, 0xc3, 0x81, 0x92, 0xa3, 0xff};
    uint8_t out[12];
    pack_k4_scales(sc, mn, out);
    CHECK(std::memcmp(out, packed, 12) == 0);
    uint8_t sc2[8], mn2[8];
    unpack_k4_scales(packed, sc2, mn2);
    for (int j = 0; j < 8; ++j) {
        CHECK(sc2[j] == sc[j]);
        CHECK(mn2[j] == mn[j]);
    }

    auto b = zeroed<BlockQ4_K>();
    b.d = kHalfOne;
    b.dmin = kHalfHalf;
    std::memcpy(b.scales, packed, 12);
    std::memset(b.qs, 0x21, sizeof b.qs);  // even sub-blocks (low nibbles) 1, odd ones 2
    // d * sc * q - dmin * m per sub-block.
    const float expect[8] = {1.0f, 3.5f, 2.0f, 6.5f, 13.0f, 47.5f, 14.0f, 94.5f};
    float y[256];
    dequantize_row_q4_K(&b, y, 256);
    for (int j = 0; j < 8; ++j) {
        INFO("sub-block " << j);
        CHECK(y[32 * j] == expect[j]);
        CHECK(y[32 * j + 31] == expect[j]);
    }
    const BlockQ8_K ones = q8k_ones();
    float s = 0;
    vec_dot_q4_K_q8_K_ref(256, &s, &b, &ones);
    CHECK(s == 32.0f * 182.0f);

    auto c = zeroed<BlockQ5_K>();
    c.d = kHalfOne;
    c.dmin = kHalfHalf;
    std::memcpy(c.scales, packed, 12);
    std::memset(c.qs, 0x21, sizeof c.qs);
    std::memset(c.qh, 0x09, sizeof c.qh);  // fifth bit for sub-block 0 (bit 0) and 3 (bit 3)
    dequantize_row_q5_K(&c, y, 256);
    CHECK(y[0] == 17.0f);  // 1 * (1 + 16) - 0
    CHECK(y[32] == 3.5f);
    CHECK(y[96] == 70.5f);  // 4 * (2 + 16) - 1.5
    CHECK(y[255] == 94.5f);
}

TEST_CASE("Q6_K block: 4 low bits in ql, 2 high bits in qh, int8 scales", "[layout]") {
    auto b = zeroed<BlockQ6_K>();
    b.d = kHalfQuarter;
    for (int j = 0; j < 16; ++j) b.scales[j] = int8_t(j - 8);
    b.ql[0] = 0x35;   // value 0: low 5, value 64: low 3
    b.ql[32] = 0xf0;  // value 32: low 0, value 96: low 15
    b.qh[0] = 0xd2;   // high bits of values 0, 32, 64, 96: 2, 0, 1, 3
    float y[256];
    dequantize_row_q6_K(&b, y, 256);
    CHECK(y[0] == -10.0f);    // 0.25 * -8 * (37 - 32)
    CHECK(y[32] == 48.0f);    // 0.25 * -6 * (0 - 32)
    CHECK(y[64] == 13.0f);    // 0.25 * -4 * (19 - 32)
    CHECK(y[96] == -15.5f);   // 0.25 * -2 * (63 - 32)
    CHECK(y[16] == 56.0f);    // 0.25 * -7 * (0 - 32)
    CHECK(y[128] == 0.0f);    // scale 0
    CHECK(y[255] == -56.0f);  // 0.25 * 7 * (0 - 32)
}

TEST_CASE("IQ4_NL block maps nibbles through the fixed table", "[layout]") {
    CHECK(kIq4nlValues[0] == -127);
    CHECK(kIq4nlValues[8] == 1);
    CHECK(kIq4nlValues[15] == 113);
    auto b = zeroed<BlockIQ4_NL>();
    b.d = kHalfHalf;
    b.qs[0] = 0xf0;
    b.qs[1] = 0x78;
    float y[32];
    dequantize_row_iq4_nl(&b, y, 32);
    CHECK(y[0] == -63.5f);
    CHECK(y[16] == 56.5f);
    CHECK(y[1] == 0.5f);
    CHECK(y[17] == -5.0f);
}

TEST_CASE("IQ4_XS block: 6-bit group scales around 32 times the IQ4_NL levels", "[layout]") {
    auto b = zeroed<BlockIQ4_XS>();
    b.d = kHalfHalf;
    b.scales_l[0] = 0x1f;    // group 0: low 15, group 1: low 1
    b.scales_h = 0x2 | 0x4;  // group 0: high 2 -> 47, group 1: high 1 -> 17
    b.qs[0] = 0xf0;          // value 0: level 0, value 16: level 15
    b.qs[16] = 0x08;         // group 1, value 32: level 8
    float y[256];
    dequantize_row_iq4_xs(&b, y, 256);
    CHECK(y[0] == 0.5f * 15 * -127);  // 0.5 * (47 - 32) * -127
    CHECK(y[16] == 0.5f * 15 * 113);
    CHECK(y[32] == 0.5f * -15 * 1);    // 0.5 * (17 - 32) * 1
    CHECK(y[64] == 0.5f * -32 * -127);  // scale bits 0: -32, level 0
}

TEST_CASE("IQ2_XXS group: grid entry 0 is eight 8s, signs come in sevens with even parity", "[layout]") {
    auto b = zeroed<BlockIQ2_XXS>();
    b.d = kHalfOne;
    // Group 0: indices 0, 0, 0, 0; signs of entry 0 = 0b0000001 (value 0 negative, so value 7 is too);
    // scale 3: db = (0.5 + 3) / 4.
    const uint32_t aux = 1u | (3u << 28);
    std::memcpy(&b.qs[2], &aux, 4);
    float y[256];
    dequantize_row_iq2_xxs(&b, y, 256);
    const float db = 3.5f * 0.25f;
    CHECK(y[0] == -8 * db);
    CHECK(y[1] == 8 * db);
    CHECK(y[7] == -8 * db);
    CHECK(y[8] == 8 * db);
    CHECK(y[32] == 8 * 0.125f);  // group 1: scale 0, no signs
    // Dot with all ones: (2 * 3 + 1) * (8 * 6 - 8 * 2 + 3 * 64) for group 0, 1 * 4 * 64 for each other,
    // times 1/8.
    const BlockQ8_K ones = q8k_ones();
    float s = 0;
    vec_dot_iq2_xxs_q8_K_ref(256, &s, &b, &ones);
    CHECK(s == 0.125f * (7 * 224 + 7 * 256));
}

TEST_CASE("TQ2_0 and TQ1_0 blocks hold ternary values", "[layout]") {
    auto b = zeroed<BlockTQ2_0>();
    b.d = kHalfTwo;
    b.qs[0] = 0x24;  // values 0, 32, 64, 96 <- fields 0, 1, 2, 0
    float y[256];
    dequantize_row_tq2_0(&b, y, 256);
    CHECK(y[0] == -2.0f);
    CHECK(y[32] == 0.0f);
    CHECK(y[64] == 2.0f);
    CHECK(y[96] == -2.0f);
    CHECK(y[128] == -2.0f);

    // TQ1_0: a byte holding trits (2, 0, 1, 2, 1) = 2*81 + 0*27 + 9 + 6 + 1 = 178 -> ceil(178 * 256 / 243).
    auto t = zeroed<BlockTQ1_0>();
    t.d = kHalfOne;
    for (auto& q : t.qs) q = 0x80;  // ceil(121 * 256 / 243): trits (1, 1, 1, 1, 1), values 0
    t.qs[0] = uint8_t((178 * 256 + 242) / 243);
    dequantize_row_tq1_0(&t, y, 256);
    CHECK(y[0] == 1.0f);
    CHECK(y[32] == -1.0f);
    CHECK(y[64] == 0.0f);
    CHECK(y[96] == 1.0f);
    CHECK(y[128] == 0.0f);
    CHECK(y[1] == 0.0f);
}

TEST_CASE("MXFP4 block: E2M1 values times a power of two", "[layout]") {
    auto b = zeroed<BlockMXFP4>();
    b.e = 127;                  // 2^0
    b.qs[0] = uint8_t(7 | 14 << 4);  // 6.0 and -4.0 (table values doubled: 12 and -8, scale halved)
    b.qs[1] = 1;                // 0.5
    float y[32];
    dequantize_row_mxfp4(&b, y, 32);
    CHECK(y[0] == 6.0f);
    CHECK(y[16] == -4.0f);
    CHECK(y[1] == 0.5f);
    CHECK(mxfp4_half_scale(0) == std::ldexp(1.0f, -128));
    CHECK(mxfp4_half_scale(1) == std::ldexp(1.0f, -127));
    CHECK(mxfp4_half_scale(254) == std::ldexp(1.0f, 126));
}

TEST_CASE("6-bit scale packing round-trips every value at every position", "[layout]") {
    quant_test::Rng rng(7);
    for (int trial = 0; trial < 256; ++trial) {
        uint8_t sc[8], mn[8], packed[12], sc2[8], mn2[8];
        for (int j = 0; j < 8; ++j) {
            sc[j] = uint8_t((trial + j) % 64);
            mn[j] = uint8_t(rng.next() % 64);
        }
        pack_k4_scales(sc, mn, packed);
        unpack_k4_scales(packed, sc2, mn2);
        REQUIRE(std::memcmp(sc, sc2, 8) == 0);
        REQUIRE(std::memcmp(mn, mn2, 8) == 0);

        int8_t s3[16], s3b[16];
        for (int j = 0; j < 16; ++j) s3[j] = int8_t((trial + 5 * j) % 64 - 32);
        pack_q3_k_scales(s3, packed);
        unpack_q3_k_scales(packed, s3b);
        REQUIRE(std::memcmp(s3, s3b, 16) == 0);
    }
}
