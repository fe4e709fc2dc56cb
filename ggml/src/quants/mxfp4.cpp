// MXFP4 (OCP microscaling FP4): 32 E2M1 values sharing an E8M0 power-of-two scale. The table
// iq::kMxfp4Values holds the E2M1 values doubled (integers), so x = kMxfp4Values[q] * 2^(e - 128).
// Dot product with Q8_0: the exact integer block sum, then sum += (dy * 2^(e - 128)) * isum per block.
#include <cassert>
#include <cmath>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"

namespace ggml {

namespace {

// Index of the first value nearest to x at scale d (ggml best_index_mxfp4).
int nearest_value(float x, float d) {
    int best = 0;
    float best_err = std::fabs(float(iq::kMxfp4Values[0]) * d - x);
    for (int i = 1; i < 16; ++i) {
        const float err = std::fabs(float(iq::kMxfp4Values[i]) * d - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return best;
}

}  // namespace

void quantize_row_mxfp4_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_MXFP4 == 0);
    auto* y = static_cast<BlockMXFP4*>(vy);
    for (int64_t i = 0; i < n / QK_MXFP4; ++i, x += QK_MXFP4) {
        float amax = 0;
        for (int j = 0; j < QK_MXFP4; ++j)
            if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
        // The largest value, 6 = 2^2 * 1.5, then sits at or below the top level (libm's log2f, as ggml).
        const uint8_t e = amax > 0.0f ? uint8_t(int(std::floor(std::log2(amax)) - 2 + 127)) : 0;
        const float d = mxfp4_half_scale(e);
        y[i].e = e;
        for (int j = 0; j < QK_MXFP4 / 2; ++j)
            y[i].qs[j] = uint8_t(nearest_value(x[j], d) | (nearest_value(x[j + QK_MXFP4 / 2], d) << 4));
    }
}

void dequantize_row_mxfp4(const void* vx, float* y, int64_t n) {
    assert(n % QK_MXFP4 == 0);
    const auto* x = static_cast<const BlockMXFP4*>(vx);
    for (int64_t i = 0; i < n / QK_MXFP4; ++i, y += QK_MXFP4) {
        const float d = mxfp4_half_scale(x[i].e);
        for (int j = 0; j < QK_MXFP4 / 2; ++j) {
            y[j] = float(iq::kMxfp4Values[x[i].qs[j] & 0xf]) * d;
            y[j + QK_MXFP4 / 2] = float(iq::kMxfp4Values[x[i].qs[j] >> 4]) * d;
        }
    }
}

void vec_dot_mxfp4_q8_0_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_MXFP4 == 0);
    const auto* x = static_cast<const BlockMXFP4*>(vx);
    const auto* y = static_cast<const BlockQ8_0*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_MXFP4; ++i) {
        int32_t isum = 0;
        for (int j = 0; j < QK_MXFP4 / 2; ++j)
            isum += iq::kMxfp4Values[x[i].qs[j] & 0xf] * y[i].qs[j] +
                    iq::kMxfp4Values[x[i].qs[j] >> 4] * y[i].qs[j + QK_MXFP4 / 2];
        sum += (fp16_to_fp32(y[i].d) * mxfp4_half_scale(x[i].e)) * float(isum);
    }
    *s = sum;
}

}  // namespace ggml
