// Weight blocks of random bytes with finite scales: every level pattern, grid index, sign and sub-block
// scale combination, not only what the quantizers produce (some formats have no quantizer here at all).
// Used by the quantization and kernel tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "ggml/quants.h"

namespace quant_test {

// A random finite half of moderate size (random bytes could be NaN or infinite).
inline uint16_t random_half(std::mt19937& rng) {
    return ggml::fp32_to_fp16(std::ldexp(float(int(rng() % 2001) - 1000), -12));
}

inline void put_half(uint8_t* p, uint16_t h) {
    std::memcpy(p, &h, 2);
}

// Overwrites one block of type t at b with random bytes, then makes its scale fields finite halves.
inline void randomize_block(ggml::Type t, uint8_t* b, std::mt19937& rng) {
    using ggml::Type;
    const size_t bs = ggml::type_size(t);
    for (size_t i = 0; i < bs; ++i) b[i] = uint8_t(rng());
    switch (t) {
        case Type::Q2_K:  // d, dmin at the end
            put_half(b + bs - 4, random_half(rng));
            put_half(b + bs - 2, random_half(rng));
            break;
        case Type::Q3_K:
        case Type::Q6_K:
        case Type::TQ1_0:
        case Type::TQ2_0:  // d at the end
            put_half(b + bs - 2, random_half(rng));
            break;
        case Type::Q4_1:
        case Type::Q5_1:
        case Type::Q4_K:
        case Type::Q5_K:  // d, m/dmin first
            put_half(b, random_half(rng));
            put_half(b + 2, random_half(rng));
            break;
        case Type::IQ1_M: {  // the half d sits in the top nibbles of the four uint16 scale words
            const uint16_t h = random_half(rng);
            uint16_t sc[4];
            std::memcpy(sc, b + offsetof(ggml::BlockIQ1_M, scales), sizeof sc);
            for (int k = 0; k < 4; ++k) sc[k] = uint16_t((sc[k] & 0x0fff) | (((h >> (4 * k)) & 0xf) << 12));
            std::memcpy(b + offsetof(ggml::BlockIQ1_M, scales), sc, sizeof sc);
            break;
        }
        case Type::MXFP4:  // E8M0 exponent: scales 2^-28 .. 2^22
            b[0] = uint8_t(100 + rng() % 51);
            break;
        default:  // d first
            put_half(b, random_half(rng));
            break;
    }
}

}  // namespace quant_test
