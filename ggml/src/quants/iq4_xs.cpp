// IQ4_XS: super-blocks of 256 values in 8 groups of 32, x = d * (sc - 32) * kIq4nlValues[q] with a 6-bit
// group scale sc and 4-bit q (group g's nibbles in qs[16g .. 16g + 15] as in IQ4_NL). Dot product: the
// exact integer sum over the super-block of (sc - 32) * level * q, then one float term (dx * dy) * isum.
#include <cassert>
#include <cmath>
#include <cstring>

#include "ggml/quants.h"
#include "scale_search.h"

namespace ggml {

namespace {

using quant_detail::iq4nl_nearest_level;
using quant_detail::nearest_int;

int group_scale(const BlockIQ4_XS& b, int g) {
    return (((b.scales_l[g / 2] >> (4 * (g % 2))) & 0xf) | (((b.scales_h >> (2 * g)) & 3) << 4)) - 32;
}

// ggml's quantize_row_iq4_nl_impl for a super-block of 256 without importance weights (w = x^2), trying
// 15 inverse scales per group: each group's scale is fitted by least squares, the group scales are stored
// as 6-bit multiples of d = -(the largest-magnitude group scale) / 32, and the levels re-picked for them.
void quantize_superblock(const float* x, BlockIQ4_XS& y) {
    constexpr int ntry = 7;
    const float v0 = kIq4nlValues[0];
    uint8_t L[QK_K];
    float scales[QK_K / 32];
    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < QK_K / 32; ++ib) {
        const float* xb = x + 32 * ib;
        float weight[32];
        for (int j = 0; j < 32; ++j) weight[j] = xb[j] * xb[j];
        float amax = 0, max = 0;
        for (int j = 0; j < 32; ++j) {
            const float ax = std::fabs(xb[j]);
            if (ax > amax) {
                amax = ax;
                max = xb[j];
            }
        }
        if (amax < 1e-15f) {
            scales[ib] = 0;
            continue;
        }
        float d = -max / v0;
        float id = 1 / d;
        float sumqx = 0, sumq2 = 0;
        for (int j = 0; j < 32; ++j) {
            const float q = kIq4nlValues[iq4nl_nearest_level(id * xb[j])];
            sumqx += weight[j] * q * xb[j];
            sumq2 += weight[j] * q * q;
        }
        d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
        float best = d * sumqx;
        for (int itry = -ntry; itry <= ntry; ++itry) {
            id = float(itry + kIq4nlValues[0]) / max;
            sumqx = sumq2 = 0;
            for (int j = 0; j < 32; ++j) {
                const float q = kIq4nlValues[iq4nl_nearest_level(id * xb[j])];
                sumqx += weight[j] * q * xb[j];
                sumq2 += weight[j] * q * q;
            }
            if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                d = sumqx / sumq2;
                best = d * sumqx;
            }
        }
        scales[ib] = d;
        if (std::fabs(d) > amax_scale) {
            amax_scale = std::fabs(d);
            max_scale = d;
        }
    }
    const float d = -max_scale / 32;
    y.d = fp32_to_fp16(d);
    y.scales_h = 0;
    std::memset(y.scales_l, 0, sizeof y.scales_l);
    const float id = d ? 1 / d : 0.f;
    for (int ib = 0; ib < QK_K / 32; ++ib) {
        int l = nearest_int(id * scales[ib]);
        l = l < -32 ? -32 : l > 31 ? 31 : l;
        const float dl = d * float(l);
        const float idl = dl ? 1 / dl : 0.f;
        for (int j = 0; j < 32; ++j) L[32 * ib + j] = uint8_t(iq4nl_nearest_level(idl * x[32 * ib + j]));
        l += 32;
        y.scales_l[ib / 2] |= uint8_t((l & 0xf) << (4 * (ib % 2)));
        y.scales_h |= uint16_t((l >> 4) << (2 * ib));
    }
    for (int i = 0; i < QK_K / 32; ++i)
        for (int j = 0; j < 16; ++j) y.qs[16 * i + j] = uint8_t(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
}

}  // namespace

void quantize_row_iq4_xs_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockIQ4_XS*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i) quantize_superblock(x + i * QK_K, y[i]);
}

void dequantize_row_iq4_xs(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ4_XS*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        for (int g = 0; g < QK_K / 32; ++g, y += 32) {
            const float dl = d * float(group_scale(x[i], g));
            const uint8_t* qs = x[i].qs + 16 * g;
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * float(kIq4nlValues[qs[j] & 0xf]);
                y[j + 16] = dl * float(kIq4nlValues[qs[j] >> 4]);
            }
        }
    }
}

void vec_dot_iq4_xs_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ4_XS*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        int32_t isum = 0;
        for (int g = 0; g < QK_K / 32; ++g) {
            const uint8_t* qs = x[i].qs + 16 * g;
            const int8_t* q8 = y[i].qs + 32 * g;
            int32_t sub = 0;
            for (int j = 0; j < 16; ++j)
                sub += kIq4nlValues[qs[j] & 0xf] * q8[j] + kIq4nlValues[qs[j] >> 4] * q8[j + 16];
            isum += group_scale(x[i], g) * sub;
        }
        sum += (fp16_to_fp32(x[i].d) * y[i].d) * float(isum);
    }
    *s = sum;
}

}  // namespace ggml
