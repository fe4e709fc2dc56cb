// Q8_0 (x = d * q, the weight/KV format and Q4_0's activation pair) and Q8_1 (Q8_0 plus the
// scaled sum s, the activation pair of Q4_1/Q5_1): 32 signed 8-bit values per block.
#include <algorithm>
#include <cassert>
#include <cmath>

#include "ggml/quants.h"

namespace ggml {

// Largest magnitude of 32 values and the matching scale d = amax / 127 with its inverse.
static float q8_scale(const float* x, float* id) {
    float amax = 0;
    for (int j = 0; j < QK8_0; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    *id = d ? 1.0f / d : 0.0f;
    return d;
}

// Rounds half away from zero (roundf), as ggml does for these formats.
static int8_t q8_level(float v) {
    return int8_t(std::clamp(std::round(v), -127.0f, 127.0f));
}

void quantize_row_q8_0_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK8_0 == 0);
    auto* y = static_cast<BlockQ8_0*>(vy);
    for (int64_t i = 0; i < n / QK8_0; ++i, x += QK8_0) {
        float id;
        y[i].d = fp32_to_fp16(q8_scale(x, &id));
        for (int j = 0; j < QK8_0; ++j) y[i].qs[j] = q8_level(x[j] * id);
    }
}

void quantize_row_q8_1_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK8_1 == 0);
    auto* y = static_cast<BlockQ8_1*>(vy);
    for (int64_t i = 0; i < n / QK8_1; ++i, x += QK8_1) {
        float id;
        const float d = q8_scale(x, &id);
        y[i].d = fp32_to_fp16(d);
        int sum = 0;
        for (int j = 0; j < QK8_1; ++j) {
            y[i].qs[j] = q8_level(x[j] * id);
            sum += y[i].qs[j];
        }
        y[i].s = fp32_to_fp16(float(sum) * d);
    }
}

void dequantize_row_q8_0(const void* vx, float* y, int64_t n) {
    assert(n % QK8_0 == 0);
    const auto* x = static_cast<const BlockQ8_0*>(vx);
    for (int64_t i = 0; i < n / QK8_0; ++i, y += QK8_0) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_0; ++j) y[j] = float(x[i].qs[j]) * d;
    }
}

void dequantize_row_q8_1(const void* vx, float* y, int64_t n) {
    assert(n % QK8_1 == 0);
    const auto* x = static_cast<const BlockQ8_1*>(vx);
    for (int64_t i = 0; i < n / QK8_1; ++i, y += QK8_1) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_1; ++j) y[j] = float(x[i].qs[j]) * d;
    }
}

void vec_dot_q8_0_q8_0_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK8_0 == 0);
    const auto* x = static_cast<const BlockQ8_0*>(vx);
    const auto* y = static_cast<const BlockQ8_0*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK8_0; ++i) {
        int32_t isum = 0;
        for (int j = 0; j < QK8_0; ++j) isum += x[i].qs[j] * y[i].qs[j];
        sum += (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) * float(isum);
    }
    *s = sum;
}

}  // namespace ggml
