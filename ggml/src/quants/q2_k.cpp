// Q2_K: super-blocks of 256 = 16 sub-blocks of 16, x = d * sc * q - dmin * m with 2-bit q and 4-bit
// sc, m per sub-block. qs[32c + l] holds values 128c + 32g + l (g = 0..3) in bits 2g, 2g+1.
#include <algorithm>
#include <cassert>
#include <cmath>

#include "ggml/quants.h"
#include "scale_search.h"

namespace ggml {

using quant_detail::make_qkx2_quants;
using quant_detail::nearest_int;

// The 2-bit level of each of the 256 values.
static void unpack_q2_K(const BlockQ2_K& b, uint8_t q[QK_K]) {
    for (int e = 0; e < QK_K; ++e) {
        const int c = e / 128, g = (e % 128) / 32, l = e % 32;
        q[e] = (b.qs[32 * c + l] >> (2 * g)) & 3;
    }
}

static void pack_q2_K(const uint8_t L[QK_K], BlockQ2_K& b) {
    for (int c = 0; c < 2; ++c)
        for (int l = 0; l < 32; ++l) {
            const uint8_t* v = L + 128 * c + l;
            b.qs[32 * c + l] = uint8_t(v[0] | (v[32] << 2) | (v[64] << 4) | (v[96] << 6));
        }
}

void quantize_row_q2_K_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockQ2_K*>(vy);
    constexpr float q4scale = 15.f;
    for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
        uint8_t L[QK_K], Laux[16];
        float weights[16], mins[QK_K / 16], scales[QK_K / 16];
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
            scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f,
                                         15, true);
            max_scale = std::max(max_scale, scales[j]);
            max_min = std::max(max_min, mins[j]);
        }
        // Scales and mins are stored as 4-bit multiples of d and dmin.
        if (max_scale > 0) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) y[i].scales[j] = uint8_t(nearest_int(iscale * scales[j]));
            y[i].d = fp32_to_fp16(max_scale / q4scale);
        } else {
            for (int j = 0; j < QK_K / 16; ++j) y[i].scales[j] = 0;
            y[i].d = fp32_to_fp16(0.f);
        }
        if (max_min > 0) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; ++j) y[i].scales[j] |= uint8_t(nearest_int(iscale * mins[j]) << 4);
            y[i].dmin = fp32_to_fp16(max_min / q4scale);
        } else {
            y[i].dmin = fp32_to_fp16(0.f);
        }
        // Re-pick the levels for the scales as stored.
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = fp16_to_fp32(y[i].d) * float(y[i].scales[j] & 0xf);
            if (!d) continue;
            const float dm = fp16_to_fp32(y[i].dmin) * float(y[i].scales[j] >> 4);
            for (int l = 0; l < 16; ++l)
                L[16 * j + l] = uint8_t(std::clamp(nearest_int((x[16 * j + l] + dm) / d), 0, 3));
        }
        pack_q2_K(L, y[i]);
    }
}

void dequantize_row_q2_K(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ2_K*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
        const float d = fp16_to_fp32(x[i].d);
        const float dmin = fp16_to_fp32(x[i].dmin);
        uint8_t q[QK_K];
        unpack_q2_K(x[i], q);
        for (int j = 0; j < QK_K / 16; ++j) {
            const float dl = d * float(x[i].scales[j] & 0xf);
            const float ml = dmin * float(x[i].scales[j] >> 4);
            for (int l = 0; l < 16; ++l) y[16 * j + l] = dl * float(q[16 * j + l]) - ml;
        }
    }
}

void vec_dot_q2_K_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ2_K*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        uint8_t q[QK_K];
        unpack_q2_K(x[i], q);
        int32_t isum = 0, imins = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            int32_t sub = 0;
            for (int l = 0; l < 16; ++l) sub += q[16 * j + l] * y[i].qs[16 * j + l];
            isum += (x[i].scales[j] & 0xf) * sub;
            imins += (x[i].scales[j] >> 4) * y[i].bsums[j];
        }
        sum +=
            (y[i].d * fp16_to_fp32(x[i].d)) * float(isum) - (y[i].d * fp16_to_fp32(x[i].dmin)) * float(imins);
    }
    *s = sum;
}

}  // namespace ggml
