// Q4_1: 32 values per block, x = d * q + m with 4-bit q.
#include <algorithm>
#include <cassert>
#include <cfloat>

#include "ggml/quants.h"

namespace ggml {

void quantize_row_q4_1_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK4_1 == 0);
    auto* y = static_cast<BlockQ4_1*>(vy);
    for (int64_t i = 0; i < n / QK4_1; ++i, x += QK4_1) {
        float min = FLT_MAX, max = -FLT_MAX;
        for (int j = 0; j < QK4_1; ++j) {
            if (x[j] < min) min = x[j];
            if (x[j] > max) max = x[j];
        }
        const float d = (max - min) / 15;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16(d);
        y[i].m = fp32_to_fp16(min);
        for (int j = 0; j < QK4_1 / 2; ++j) {
            const auto lo = uint8_t(std::clamp((x[j] - min) * id + 0.5f, 0.0f, 15.0f));
            const auto hi = uint8_t(std::clamp((x[j + QK4_1 / 2] - min) * id + 0.5f, 0.0f, 15.0f));
            y[i].qs[j] = uint8_t(lo | (hi << 4));
        }
    }
}

void dequantize_row_q4_1(const void* vx, float* y, int64_t n) {
    assert(n % QK4_1 == 0);
    const auto* x = static_cast<const BlockQ4_1*>(vx);
    for (int64_t i = 0; i < n / QK4_1; ++i, y += QK4_1) {
        const float d = fp16_to_fp32(x[i].d);
        const float m = fp16_to_fp32(x[i].m);
        for (int j = 0; j < QK4_1 / 2; ++j) {
            y[j] = float(x[i].qs[j] & 0x0f) * d + m;
            y[j + QK4_1 / 2] = float(x[i].qs[j] >> 4) * d + m;
        }
    }
}

void vec_dot_q4_1_q8_1_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK4_1 == 0);
    const auto* x = static_cast<const BlockQ4_1*>(vx);
    const auto* y = static_cast<const BlockQ8_1*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK4_1; ++i) {
        int32_t isum = 0;
        for (int j = 0; j < QK4_1 / 2; ++j) {
            isum += (x[i].qs[j] & 0x0f) * y[i].qs[j];
            isum += (x[i].qs[j] >> 4) * y[i].qs[j + QK4_1 / 2];
        }
        // sum_j (d q_j + m) yd yq_j = d yd isum + m (yd sum_j yq_j), the last factor stored as s.
        sum += (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) * float(isum) +
               fp16_to_fp32(x[i].m) * fp16_to_fp32(y[i].s);
    }
    *s = sum;
}

}  // namespace ggml
