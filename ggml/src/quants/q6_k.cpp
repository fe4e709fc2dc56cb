// Q6_K: super-blocks of 256 = 16 sub-blocks of 16, x = d * sc * (q - 32) with 6-bit q and int8 sc.
// In each half c of 128 values, value 128c + 32g + l (g = 0..3) has its low nibble in
// ql[64c + l + 32 * (g & 1)] (low nibble for g < 2, high for g >= 2) and its top 2 bits in
// qh[32c + l] at bit 2g.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "ggml/quants.h"
#include "scale_search.h"

namespace ggml {

using quant_detail::make_qx_quants;
using quant_detail::nearest_int;

static void unpack_q6_K(const BlockQ6_K& b, uint8_t q[QK_K]) {
    for (int c = 0; c < 2; ++c)
        for (int g = 0; g < 4; ++g)
            for (int l = 0; l < 32; ++l) {
                const uint8_t byte = b.ql[64 * c + l + 32 * (g & 1)];
                const int low = g < 2 ? (byte & 0x0f) : (byte >> 4);
                const int high = (b.qh[32 * c + l] >> (2 * g)) & 3;
                q[128 * c + 32 * g + l] = uint8_t(low | (high << 4));
            }
}

static void pack_q6_K(const int8_t L[QK_K], BlockQ6_K& b) {
    std::memset(b.ql, 0, sizeof b.ql);
    std::memset(b.qh, 0, sizeof b.qh);
    for (int c = 0; c < 2; ++c)
        for (int g = 0; g < 4; ++g)
            for (int l = 0; l < 32; ++l) {
                const int v = L[128 * c + 32 * g + l];
                b.ql[64 * c + l + 32 * (g & 1)] |= uint8_t((v & 0x0f) << (g < 2 ? 0 : 4));
                b.qh[32 * c + l] |= uint8_t((v >> 4) << (2 * g));
            }
}

void quantize_row_q6_K_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockQ6_K*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
        int8_t L[QK_K];
        float scales[QK_K / 16];
        float max_scale = 0, max_abs_scale = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            scales[j] = make_qx_quants(16, 32, x + 16 * j, L + 16 * j, nullptr);
            if (std::fabs(scales[j]) > max_abs_scale) {
                max_abs_scale = std::fabs(scales[j]);
                max_scale = scales[j];
            }
        }
        if (max_abs_scale < 1e-15f) {  // all-zero super-block
            std::memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        // The largest scale maps to -128 so the int8 sub-block scales use their full range.
        const float iscale = -128.f / max_scale;
        y[i].d = fp32_to_fp16(1 / iscale);
        for (int j = 0; j < QK_K / 16; ++j)
            y[i].scales[j] = int8_t(std::min(127, nearest_int(iscale * scales[j])));
        // Re-pick the levels for the scales as stored.
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = fp16_to_fp32(y[i].d) * float(y[i].scales[j]);
            if (!d) continue;
            for (int l = 0; l < 16; ++l)
                L[16 * j + l] = int8_t(std::clamp(nearest_int(x[16 * j + l] / d), -32, 31) + 32);
        }
        pack_q6_K(L, y[i]);
    }
}

void dequantize_row_q6_K(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ6_K*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
        const float d = fp16_to_fp32(x[i].d);
        uint8_t q[QK_K];
        unpack_q6_K(x[i], q);
        for (int e = 0; e < QK_K; ++e) y[e] = d * float(x[i].scales[e / 16]) * float(q[e] - 32);
    }
}

void vec_dot_q6_K_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ6_K*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        uint8_t q[QK_K];
        unpack_q6_K(x[i], q);
        int32_t isum = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            int32_t sub = 0;
            for (int l = 0; l < 16; ++l) sub += (q[16 * j + l] - 32) * y[i].qs[16 * j + l];
            isum += x[i].scales[j] * sub;
        }
        sum += (y[i].d * fp16_to_fp32(x[i].d)) * float(isum);
    }
    *s = sum;
}

}  // namespace ggml
