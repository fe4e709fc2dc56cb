// Q5_0 (x = d * (q - 16)) and Q5_1 (x = d * q + m): 32 values per block, 5-bit q split into low
// nibbles (qs, arranged as in Q4_0) and fifth bits (qh, bit j for value j, little endian).
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "ggml/quants.h"

namespace ggml {

void quantize_row_q5_0_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK5_0 == 0);
    auto* y = static_cast<BlockQ5_0*>(vy);
    for (int64_t i = 0; i < n / QK5_0; ++i, x += QK5_0) {
        float amax = 0, max = 0;
        for (int j = 0; j < QK5_0; ++j) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -16;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < QK5_0 / 2; ++j) {
            const auto lo = uint32_t(std::clamp(x[j] * id + 16.5f, 0.0f, 31.0f));
            const auto hi = uint32_t(std::clamp(x[j + QK5_0 / 2] * id + 16.5f, 0.0f, 31.0f));
            y[i].qs[j] = uint8_t((lo & 0x0f) | ((hi & 0x0f) << 4));
            qh |= (lo >> 4) << j;
            qh |= (hi >> 4) << (j + QK5_0 / 2);
        }
        const uint8_t qh_le[4] = {uint8_t(qh), uint8_t(qh >> 8), uint8_t(qh >> 16), uint8_t(qh >> 24)};
        std::memcpy(y[i].qh, qh_le, 4);
    }
}

static uint32_t load_qh(const uint8_t qh[4]) {
    return uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
}

// The 5-bit level of value j (0..31) of a block.
static int level_q5(const uint8_t* qs, uint32_t qh, int j) {
    const int nib = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
    return nib | int((qh >> j) & 1) << 4;
}

void dequantize_row_q5_0(const void* vx, float* y, int64_t n) {
    assert(n % QK5_0 == 0);
    const auto* x = static_cast<const BlockQ5_0*>(vx);
    for (int64_t i = 0; i < n / QK5_0; ++i, y += QK5_0) {
        const float d = fp16_to_fp32(x[i].d);
        const uint32_t qh = load_qh(x[i].qh);
        for (int j = 0; j < QK5_0; ++j) y[j] = float(level_q5(x[i].qs, qh, j) - 16) * d;
    }
}

void vec_dot_q5_0_q8_0_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK5_0 == 0);
    const auto* x = static_cast<const BlockQ5_0*>(vx);
    const auto* y = static_cast<const BlockQ8_0*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK5_0; ++i) {
        const uint32_t qh = load_qh(x[i].qh);
        int32_t isum = 0;
        for (int j = 0; j < QK5_0; ++j) isum += (level_q5(x[i].qs, qh, j) - 16) * y[i].qs[j];
        sum += (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) * float(isum);
    }
    *s = sum;
}

void quantize_row_q5_1_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK5_1 == 0);
    auto* y = static_cast<BlockQ5_1*>(vy);
    for (int64_t i = 0; i < n / QK5_1; ++i, x += QK5_1) {
        float min = x[0], max = x[0];
        for (int j = 1; j < QK5_1; ++j) {
            if (x[j] < min) min = x[j];
            if (x[j] > max) max = x[j];
        }
        const float d = (max - min) / 31;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16(d);
        y[i].m = fp32_to_fp16(min);
        uint32_t qh = 0;
        for (int j = 0; j < QK5_1 / 2; ++j) {
            const auto lo = uint32_t(std::clamp((x[j] - min) * id + 0.5f, 0.0f, 31.0f));
            const auto hi = uint32_t(std::clamp((x[j + QK5_1 / 2] - min) * id + 0.5f, 0.0f, 31.0f));
            y[i].qs[j] = uint8_t((lo & 0x0f) | ((hi & 0x0f) << 4));
            qh |= (lo >> 4) << j;
            qh |= (hi >> 4) << (j + QK5_1 / 2);
        }
        const uint8_t qh_le[4] = {uint8_t(qh), uint8_t(qh >> 8), uint8_t(qh >> 16), uint8_t(qh >> 24)};
        std::memcpy(y[i].qh, qh_le, 4);
    }
}

void dequantize_row_q5_1(const void* vx, float* y, int64_t n) {
    assert(n % QK5_1 == 0);
    const auto* x = static_cast<const BlockQ5_1*>(vx);
    for (int64_t i = 0; i < n / QK5_1; ++i, y += QK5_1) {
        const float d = fp16_to_fp32(x[i].d);
        const float m = fp16_to_fp32(x[i].m);
        const uint32_t qh = load_qh(x[i].qh);
        for (int j = 0; j < QK5_1; ++j) y[j] = float(level_q5(x[i].qs, qh, j)) * d + m;
    }
}

void vec_dot_q5_1_q8_1_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK5_1 == 0);
    const auto* x = static_cast<const BlockQ5_1*>(vx);
    const auto* y = static_cast<const BlockQ8_1*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK5_1; ++i) {
        const uint32_t qh = load_qh(x[i].qh);
        int32_t isum = 0;
        for (int j = 0; j < QK5_1; ++j) isum += level_q5(x[i].qs, qh, j) * y[i].qs[j];
        sum += (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) * float(isum) +
               fp16_to_fp32(x[i].m) * fp16_to_fp32(y[i].s);
    }
    *s = sum;
}

}  // namespace ggml
