// Q4_K: super-blocks of 256 = 8 sub-blocks of 32, x = d * sc * q - dmin * m with 4-bit q and 6-bit
// sc, m. qs[32c + l] holds value 64c + l in its low nibble and 64c + 32 + l in its high nibble.
#include <cassert>

#include "ggml/quants.h"
#include "scale_search.h"

namespace ggml {

static void unpack_q4_K(const BlockQ4_K& b, uint8_t q[QK_K]) {
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
            q[64 * c + l] = b.qs[32 * c + l] & 0x0f;
            q[64 * c + 32 + l] = b.qs[32 * c + l] >> 4;
        }
}

void quantize_row_q4_K_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockQ4_K*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
        uint8_t L[QK_K];
        quant_detail::quantize_k4_superblock(x, 15, -1.f, 0.1f, 20, &y[i].d, &y[i].dmin, y[i].scales, L);
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l)
                y[i].qs[32 * c + l] = uint8_t(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
    }
}

void dequantize_row_q4_K(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ4_K*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
        const float d = fp16_to_fp32(x[i].d);
        const float dmin = fp16_to_fp32(x[i].dmin);
        uint8_t sc[8], mn[8], q[QK_K];
        unpack_k4_scales(x[i].scales, sc, mn);
        unpack_q4_K(x[i], q);
        for (int j = 0; j < 8; ++j) {
            const float dl = d * float(sc[j]);
            const float ml = dmin * float(mn[j]);
            for (int l = 0; l < 32; ++l) y[32 * j + l] = dl * float(q[32 * j + l]) - ml;
        }
    }
}

void vec_dot_q4_K_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ4_K*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        uint8_t sc[8], mn[8], q[QK_K];
        unpack_k4_scales(x[i].scales, sc, mn);
        unpack_q4_K(x[i], q);
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
