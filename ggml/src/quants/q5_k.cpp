// Q5_K: as Q4_K with 5-bit q. The low nibbles are laid out as in Q4_K; the fifth bit of value
// 64c + l is bit 2c of qh[l] and that of value 64c + 32 + l is bit 2c + 1.
#include <cassert>
#include <cstring>

#include "ggml/quants.h"
#include "scale_search.h"

namespace ggml {

static void unpack_q5_K(const BlockQ5_K& b, uint8_t q[QK_K]) {
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
            q[64 * c + l] = uint8_t((b.qs[32 * c + l] & 0x0f) | (((b.qh[l] >> (2 * c)) & 1) << 4));
            q[64 * c + 32 + l] = uint8_t((b.qs[32 * c + l] >> 4) | (((b.qh[l] >> (2 * c + 1)) & 1) << 4));
        }
}

void quantize_row_q5_K_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockQ5_K*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
        uint8_t L[QK_K];
        quant_detail::quantize_k4_superblock(x, 31, -0.5f, 0.1f, 15, &y[i].d, &y[i].dmin, y[i].scales, L);
        std::memset(y[i].qh, 0, sizeof y[i].qh);
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l) {
                const int lo = L[64 * c + l], hi = L[64 * c + 32 + l];
                y[i].qs[32 * c + l] = uint8_t((lo & 0x0f) | ((hi & 0x0f) << 4));
                y[i].qh[l] |= uint8_t(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
            }
    }
}

void dequantize_row_q5_K(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ5_K*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
        const float d = fp16_to_fp32(x[i].d);
        const float dmin = fp16_to_fp32(x[i].dmin);
        uint8_t sc[8], mn[8], q[QK_K];
        unpack_k4_scales(x[i].scales, sc, mn);
        unpack_q5_K(x[i], q);
        for (int j = 0; j < 8; ++j) {
            const float dl = d * float(sc[j]);
            const float ml = dmin * float(mn[j]);
            for (int l = 0; l < 32; ++l) y[32 * j + l] = dl * float(q[32 * j + l]) - ml;
        }
    }
}

void vec_dot_q5_K_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ5_K*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        uint8_t sc[8], mn[8], q[QK_K];
        unpack_k4_scales(x[i].scales, sc, mn);
        unpack_q5_K(x[i], q);
        int32_t isum = 0, imins = 0;
        for (int j = 0; j < 8; ++j) {
            int32_t sub = 0;
            for (int l = 0; l < 32; ++l) sub += q[32 * j + l] * y[i].qs[32 * j + l];
            isum += sc[j] * sub;
            imins += mn[j] * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
        }
        sum +=
            (y[i].d * fp16_to_fp32(x[i].d)) * float(isum) - (y[i].d * fp16_to_fp32(x[i].dmin)) * float(imins);
    }
    *s = sum;
}

}  // namespace ggml
