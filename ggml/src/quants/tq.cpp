// TQ1_0 and TQ2_0: ternary super-blocks of 256 values d * (t - 1), t in {0, 1, 2} (BitNet b1.58 / TriLM
// weights). TQ1_0 packs 5 trits per byte as a fixed-point fraction of 3^5 (trit n is the integer part
// of 3 * (byte * 3^n mod 256) / 256) and 4 per byte for the last 16 values; TQ2_0 uses 2 bits per value.
// Dot products: the exact integer sum of (t - 1) * q, then (dx * dy) * isum.
#include <cassert>
#include <cmath>

#include "ggml/quants.h"

namespace ggml {

namespace {

constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};

// Trit n (0..4) of a TQ1_0 byte.
int trit(uint8_t byte, int n) {
    const uint8_t q = uint8_t(byte * kPow3[n]);
    return (uint16_t(q) * 3) >> 8;
}

// Visits the 256 values of a TQ1_0 block in value order: f(value index, trit).
template <class F>
void for_each_tq1_trit(const BlockTQ1_0& b, F f) {
    int v = 0;
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 32; ++m) f(v++, trit(b.qs[m], n));
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 16; ++m) f(v++, trit(b.qs[32 + m], n));
    for (int n = 0; n < 4; ++n)
        for (int j = 0; j < 4; ++j) f(v++, trit(b.qh[j], n));
}

// Rounds x * id to a trit (lroundf: half away from zero), as 0, 1, 2.
int to_trit(float x, float id) {
    return int(std::lround(x * id)) + 1;
}

// Packs trits (first one most significant) into a byte as ceil(value * 256 / 243).
uint8_t pack_trits(int value) {
    return uint8_t((uint16_t(value) * 256 + (243 - 1)) / 243);
}

float absmax_scale(const float* x) {
    float amax = 0;
    for (int j = 0; j < QK_K; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    return amax;
}

}  // namespace

void quantize_row_tq1_0_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockTQ1_0*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
        const float d = absmax_scale(x);
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16(d);
        // Bytes 0-31: values m, m + 32, ..., m + 128; bytes 32-47: 160 + m, 176 + m, ...; qh: 240 + j, ...
        for (int m = 0; m < 32; ++m) {
            int q = 0;
            for (int k = 0; k < 5; ++k) q = q * 3 + to_trit(x[m + 32 * k], id);
            y[i].qs[m] = pack_trits(q);
        }
        for (int m = 0; m < 16; ++m) {
            int q = 0;
            for (int k = 0; k < 5; ++k) q = q * 3 + to_trit(x[160 + m + 16 * k], id);
            y[i].qs[32 + m] = pack_trits(q);
        }
        for (int j = 0; j < 4; ++j) {
            int q = 0;
            for (int k = 0; k < 4; ++k) q = q * 3 + to_trit(x[240 + j + 4 * k], id);
            y[i].qh[j] = pack_trits(q * 3);  // the first value in the most significant of 5 trits
        }
    }
}

void quantize_row_tq2_0_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockTQ2_0*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i, x += QK_K) {
        const float d = absmax_scale(x);
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16(d);
        for (int c = 0; c < 2; ++c)
            for (int m = 0; m < 32; ++m) {
                int q = 0;
                for (int l = 0; l < 4; ++l) q |= (to_trit(x[128 * c + 32 * l + m], id) & 3) << (2 * l);
                y[i].qs[32 * c + m] = uint8_t(q);
            }
    }
}

void dequantize_row_tq1_0(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockTQ1_0*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
        const float d = fp16_to_fp32(x[i].d);
        for_each_tq1_trit(x[i], [&](int v, int t) { y[v] = float(t - 1) * d; });
    }
}

void dequantize_row_tq2_0(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockTQ2_0*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i, y += QK_K) {
        const float d = fp16_to_fp32(x[i].d);
        for (int v = 0; v < QK_K; ++v) {
            const int q = (x[i].qs[32 * (v / 128) + v % 32] >> (2 * ((v % 128) / 32))) & 3;
            y[v] = float(q - 1) * d;
        }
    }
}

void vec_dot_tq1_0_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockTQ1_0*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        int32_t isum = 0;
        for_each_tq1_trit(x[i], [&](int v, int t) { isum += (t - 1) * y[i].qs[v]; });
        sum += (fp16_to_fp32(x[i].d) * y[i].d) * float(isum);
    }
    *s = sum;
}

void vec_dot_tq2_0_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockTQ2_0*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        int32_t isum = 0;
        for (int v = 0; v < QK_K; ++v) {
            const int q = (x[i].qs[32 * (v / 128) + v % 32] >> (2 * ((v % 128) / 32))) & 3;
            isum += (q - 1) * y[i].qs[v];
        }
        sum += (fp16_to_fp32(x[i].d) * y[i].d) * float(isum);
    }
    *s = sum;
}

}  // namespace ggml
