// IQ4_NL: 32 values per block, x = d * kIq4nlValues[q] with a 4-bit index q (nibbles as in Q4_0).
#include <cassert>
#include <cmath>

#include "ggml/quants.h"
#include "scale_search.h"

namespace ggml {

using quant_detail::iq4nl_nearest_level;

// Comparing 2v with the sum of neighbouring levels is exact, so the choice never depends on rounding
// (ggml compares the two rounded distances, which agree: near every midpoint they are exact).
int quant_detail::iq4nl_nearest_level(float v) {
    const float v2 = v + v;
    int idx = 0;
    for (int step = 8; step > 0; step >>= 1) {
        const int j = idx + step;
        if (v2 >= float(kIq4nlValues[j - 1] + kIq4nlValues[j])) idx = j;
    }
    return idx;
}

// ggml's quantize_row_iq4_nl_impl for one block without importance weights (w = x^2). ntry <= 0:
// keep the levels picked at d = max / -127 and fit d by least squares. ntry > 0: also try the inverse
// scales (ntry' - 127) / max for ntry' in [-ntry, ntry], keep the best fit and re-pick the levels.
static void quantize_block(const float* x, BlockIQ4_NL& y, int ntry) {
    constexpr int n = QK4_NL;
    uint8_t L[n] = {};
    float weight[n];
    for (int j = 0; j < n; ++j) weight[j] = x[j] * x[j];
    float amax = 0, max = 0;
    for (int j = 0; j < n; ++j) {
        if (std::fabs(x[j]) > amax) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    float d = 0;
    if (amax >= 1e-15f) {
        const float v0 = kIq4nlValues[0];
        d = ntry > 0 ? -max / v0 : max / v0;
        float id = 1 / d;
        float sumqx = 0, sumq2 = 0;
        for (int j = 0; j < n; ++j) {
            L[j] = uint8_t(iq4nl_nearest_level(id * x[j]));
            const float q = kIq4nlValues[L[j]];
            sumqx += weight[j] * q * x[j];
            sumq2 += weight[j] * q * q;
        }
        d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
        float best = d * sumqx;
        for (int itry = -ntry; itry <= ntry; ++itry) {
            id = (float(itry) + v0) / max;
            sumqx = sumq2 = 0;
            for (int j = 0; j < n; ++j) {
                const float q = kIq4nlValues[iq4nl_nearest_level(id * x[j])];
                sumqx += weight[j] * q * x[j];
                sumq2 += weight[j] * q * q;
            }
            if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                d = sumqx / sumq2;
                best = d * sumqx;
            }
        }
        if (ntry > 0) {
            const float inv = d ? 1 / d : 0;
            for (int j = 0; j < n; ++j) L[j] = uint8_t(iq4nl_nearest_level(inv * x[j]));
        }
    }
    y.d = fp32_to_fp16(d);
    for (int j = 0; j < n / 2; ++j) y.qs[j] = uint8_t(L[j] | (L[j + n / 2] << 4));
}

void quantize_row_iq4_nl_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK4_NL == 0);
    auto* y = static_cast<BlockIQ4_NL*>(vy);
    for (int64_t i = 0; i < n / QK4_NL; ++i) quantize_block(x + i * QK4_NL, y[i], -1);
}

void quantize_row_iq4_nl_search(const float* x, void* vy, int64_t n) {
    assert(n % QK4_NL == 0);
    auto* y = static_cast<BlockIQ4_NL*>(vy);
    for (int64_t i = 0; i < n / QK4_NL; ++i) quantize_block(x + i * QK4_NL, y[i], 7);
}

void dequantize_row_iq4_nl(const void* vx, float* y, int64_t n) {
    assert(n % QK4_NL == 0);
    const auto* x = static_cast<const BlockIQ4_NL*>(vx);
    for (int64_t i = 0; i < n / QK4_NL; ++i, y += QK4_NL) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK4_NL / 2; ++j) {
            y[j] = d * float(kIq4nlValues[x[i].qs[j] & 0x0f]);
            y[j + QK4_NL / 2] = d * float(kIq4nlValues[x[i].qs[j] >> 4]);
        }
    }
}

void vec_dot_iq4_nl_q8_0_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK4_NL == 0);
    const auto* x = static_cast<const BlockIQ4_NL*>(vx);
    const auto* y = static_cast<const BlockQ8_0*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK4_NL; ++i) {
        int32_t isum = 0;
        for (int j = 0; j < QK4_NL / 2; ++j) {
            isum += kIq4nlValues[x[i].qs[j] & 0x0f] * y[i].qs[j];
            isum += kIq4nlValues[x[i].qs[j] >> 4] * y[i].qs[j + QK4_NL / 2];
        }
        sum += (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) * float(isum);
    }
    *s = sum;
}

}  // namespace ggml
