// Q3_K: super-blocks of 256 = 16 sub-blocks of 16, x = d * sc * (q - 4) with 3-bit q and signed 6-bit
// sc. The low 2 bits of q are laid out as in Q2_K; bit 2 of value e is bit e / 32 of hmask[e % 32].
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "ggml/quants.h"
#include "scale_search.h"

namespace ggml {

using quant_detail::make_q3_quants;
using quant_detail::nearest_int;

// The 3-bit level (0..7) of each of the 256 values.
static void unpack_q3_K(const BlockQ3_K& b, uint8_t q[QK_K]) {
    for (int e = 0; e < QK_K; ++e) {
        const int c = e / 128, g = (e % 128) / 32, l = e % 32;
        const int low = (b.qs[32 * c + l] >> (2 * g)) & 3;
        const int high = (b.hmask[e % 32] >> (e / 32)) & 1;
        q[e] = uint8_t(low | (high << 2));
    }
}

static void pack_q3_K(const int8_t L[QK_K], BlockQ3_K& b) {
    std::memset(b.hmask, 0, sizeof b.hmask);
    std::memset(b.qs, 0, sizeof b.qs);
    for (int e = 0; e < QK_K; ++e) {
        const int c = e / 128, g = (e % 128) / 32, l = e % 32;
        if (L[e] > 3) b.hmask[e % 32] |= uint8_t(1 << (e / 32));
        b.qs[32 * c + l] |= uint8_t((L[e] & 3) << (2 * g));
    }
}

void quantize_row_q3_K_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockQ3_K*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        // The sub-block scale of largest magnitude, with its sign, sets the super-block scale.
        float max_scale = 0, amax = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
            if (std::fabs(scales[j]) > amax) {
                amax = std::fabs(scales[j]);
                max_scale = scales[j];
            }
        }
        int8_t sc[16] = {};
        if (max_scale) {
            const float iscale = -32.f / max_scale;
            for (int j = 0; j < QK_K / 16; ++j)
                sc[j] = int8_t(std::clamp<int>(int8_t(nearest_int(iscale * scales[j])), -32, 31));
            y[i].d = fp32_to_fp16(1 / iscale);
        } else {
            for (int j = 0; j < QK_K / 16; ++j) sc[j] = -32;  // all-zero packed bytes
            y[i].d = fp32_to_fp16(0.f);
        }
        pack_q3_k_scales(sc, y[i].scales);
        // Re-pick the levels for the scales as stored.
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = fp16_to_fp32(y[i].d) * float(sc[j]);
            if (!d) continue;
            for (int l = 0; l < 16; ++l)
                L[16 * j + l] = int8_t(std::clamp(nearest_int(x[16 * j + l] / d), -4, 3) + 4);
        }
        pack_q3_K(L, y[i]);
    }
}

void dequantize_row_q3_K(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ3_K*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
        const float d = fp16_to_fp32(x[i].d);
        int8_t sc[16];
        unpack_q3_k_scales(x[i].scales, sc);
        uint8_t q[QK_K];
        unpack_q3_K(x[i], q);
        for (int j = 0; j < QK_K / 16; ++j) {
            const float dl = d * float(sc[j]);
            for (int l = 0; l < 16; ++l) y[16 * j + l] = dl * float(q[16 * j + l] - 4);
        }
    }
}

void vec_dot_q3_K_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ3_K*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        int8_t sc[16];
        unpack_q3_k_scales(x[i].scales, sc);
        uint8_t q[QK_K];
        unpack_q3_K(x[i], q);
        int32_t isum = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            int32_t sub = 0;
            for (int l = 0; l < 16; ++l) sub += (q[16 * j + l] - 4) * y[i].qs[16 * j + l];
            isum += sc[j] * sub;
        }
        sum += (y[i].d * fp16_to_fp32(x[i].d)) * float(isum);
    }
    *s = sum;
}

}  // namespace ggml
