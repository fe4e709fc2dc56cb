// Packing of the 6-bit sub-block scales of Q3_K, Q4_K and Q5_K into 12 bytes.
#include <cstring>

#include "ggml/quants.h"

namespace ggml {

// Q4_K/Q5_K: bytes 0-3 hold sc[0..3] and bytes 4-7 mn[0..3] in their low 6 bits; bytes 8-11 hold
// the low nibbles of sc[4..7] (low) and mn[4..7] (high), whose top 2 bits go to the spare top bits
// of bytes 0-3 (sc) and 4-7 (mn).
void unpack_k4_scales(const uint8_t q[K_SCALE_SIZE], uint8_t sc[8], uint8_t mn[8]) {
    for (int j = 0; j < 4; ++j) {
        sc[j] = q[j] & 63;
        mn[j] = q[j + 4] & 63;
        sc[j + 4] = uint8_t((q[j + 8] & 0x0f) | ((q[j] >> 6) << 4));
        mn[j + 4] = uint8_t((q[j + 8] >> 4) | ((q[j + 4] >> 6) << 4));
    }
}

void pack_k4_scales(const uint8_t sc[8], const uint8_t mn[8], uint8_t q[K_SCALE_SIZE]) {
    for (int j = 0; j < 4; ++j) {
        q[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        q[j + 4] = uint8_t((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
        q[j + 8] = uint8_t((sc[j + 4] & 0x0f) | ((mn[j + 4] & 0x0f) << 4));
    }
}

// Q3_K: value j (stored as sc + 32 in 0..63) has its low nibble in byte j (j < 8) or in the high
// nibble of byte j - 8, and its top 2 bits in byte 8 + j % 4 at bit 2 * (j / 4).
void unpack_q3_k_scales(const uint8_t q[K_SCALE_SIZE], int8_t sc[16]) {
    for (int j = 0; j < 16; ++j) {
        const int lo = j < 8 ? (q[j] & 0x0f) : (q[j - 8] >> 4);
        const int hi = (q[8 + j % 4] >> (2 * (j / 4))) & 3;
        sc[j] = int8_t((lo | (hi << 4)) - 32);
    }
}

void pack_q3_k_scales(const int8_t sc[16], uint8_t q[K_SCALE_SIZE]) {
    std::memset(q, 0, K_SCALE_SIZE);
    for (int j = 0; j < 16; ++j) {
        const int l = sc[j] + 32;
        q[j % 8] |= uint8_t((l & 0x0f) << (j < 8 ? 0 : 4));
        q[8 + j % 4] |= uint8_t((l >> 4) << (2 * (j / 4)));
    }
}

}  // namespace ggml
