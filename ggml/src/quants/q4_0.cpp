// Q4_0: 32 values per block, x = d * (q - 8) with 4-bit q.
#include <algorithm>
#include <cassert>
#include <cmath>

#include "ggml/quants.h"

namespace ggml {

void quantize_row_q4_0_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK4_0 == 0);
    auto* y = static_cast<BlockQ4_0*>(vy);
    for (int64_t i = 0; i < n / QK4_0; ++i, x += QK4_0) {
        // The value of largest magnitude maps to level 0 (-8), so its sign picks the sign of d.
        float amax = 0, max = 0;
        for (int j = 0; j < QK4_0; ++j) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -8;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16(d);
        for (int j = 0; j < QK4_0 / 2; ++j) {
            // Truncating x * id + 8.5 rounds to the nearest level; clamping first keeps it defined.
            const auto lo = uint8_t(std::clamp(x[j] * id + 8.5f, 0.0f, 15.0f));
            const auto hi = uint8_t(std::clamp(x[j + QK4_0 / 2] * id + 8.5f, 0.0f, 15.0f));
            y[i].qs[j] = uint8_t(lo | (hi << 4));
        }
    }
}

void dequantize_row_q4_0(const void* vx, float* y, int64_t n) {
    assert(n % QK4_0 == 0);
    const auto* x = static_cast<const BlockQ4_0*>(vx);
    for (int64_t i = 0; i < n / QK4_0; ++i, y += QK4_0) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK4_0 / 2; ++j) {
            y[j] = float((x[i].qs[j] & 0x0f) - 8) * d;
            y[j + QK4_0 / 2] = float((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void vec_dot_q4_0_q8_0_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK4_0 == 0);
    const auto* x = static_cast<const BlockQ4_0*>(vx);
    const auto* y = static_cast<const BlockQ8_0*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK4_0; ++i) {
        int32_t isum = 0;
        for (int j = 0; j < QK4_0 / 2; ++j) {
            isum += ((x[i].qs[j] & 0x0f) - 8) * y[i].qs[j];
            isum += ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + QK4_0 / 2];
        }
        sum += (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) * float(isum);
    }
    *s = sum;
}

}  // namespace ggml
