// Q8_K: the activation format paired with the K-quants. 256 values, float scale, and the sums of
// each group of 16 quants (bsums) so that dot products can apply the weights' mins cheaply.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "ggml/quants.h"
#include "scale_search.h"

namespace ggml {

void quantize_row_q8_K_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockQ8_K*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
        float max = 0, amax = 0;
        for (int j = 0; j < QK_K; ++j) {
            if (std::fabs(x[j]) > amax) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        if (!amax) {  // ggml leaves bsums unset here; zeroing them keeps the bytes deterministic
            std::memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        // -127 rather than -128 keeps every quant in [-127, 127] (the AVX kernels rely on it).
        const float iscale = -127.f / max;
        for (int j = 0; j < QK_K; ++j)
            y[i].qs[j] = int8_t(std::min(127, quant_detail::nearest_int(iscale * x[j])));
        for (int j = 0; j < QK_K / 16; ++j) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) sum += y[i].qs[16 * j + l];
            y[i].bsums[j] = int16_t(sum);
        }
        y[i].d = 1 / iscale;
    }
}

void dequantize_row_q8_K(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockQ8_K*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K)
        for (int j = 0; j < QK_K; ++j) y[j] = x[i].d * float(x[i].qs[j]);
}

}  // namespace ggml
