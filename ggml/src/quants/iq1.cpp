// IQ1_S and IQ1_M: super-blocks of 256 values; every 8 values are one entry of a grid of values in
// {-1, 0, 1} (iq_grids.h), shifted by +-1/8 and scaled by d * (2 s + 1). Dot products: exact integer sums
// of ls * grid * q and of ls * shift sign * q over the super-block, then one float term
// (dx * dy) * (isum + isum_shift / 8). Quantizing needs an importance matrix in llama.cpp; there is none
// here (type_traits' from_float_ref is null).
#include <cassert>
#include <cstring>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"

namespace ggml {

namespace {

int8_t grid_value(uint64_t e, int j) {
    return int8_t(iq::grid_byte(e, j));
}

int32_t dot8(uint64_t grid, const int8_t* q) {
    int32_t s = 0;
    for (int j = 0; j < 8; ++j) s += q[j] * grid_value(grid, j);
    return s;
}

// Index (11 bits) of entry l (0..3) of group g of an IQ1_S block.
int iq1_s_index(const BlockIQ1_S& b, int g, int l) {
    return b.qs[4 * g + l] | (((b.qh[g] >> (3 * l)) & 7) << 8);
}

// IQ1_M: index of entry l of group g, the sign of its shift, and the super-block scale.
int iq1_m_index(const BlockIQ1_M& b, int g, int l) {
    return b.qs[4 * g + l] | ((uint16_t(b.qh[2 * g + l / 2]) << (8 - 4 * (l % 2))) & 0x700);
}
bool iq1_m_negative_shift(const BlockIQ1_M& b, int g, int l) {
    return (b.qh[2 * g + l / 2] >> (3 + 4 * (l % 2))) & 1;
}
void iq1_m_scales(const BlockIQ1_M& b, uint16_t sc[4], float* d) {
    std::memcpy(sc, b.scales, 4 * sizeof(uint16_t));
    const uint16_t h = (sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000);
    *d = fp16_to_fp32(h);
}
// The 3-bit scale of half h (entries 2h, 2h + 1) of group g.
int iq1_m_scale(const uint16_t sc[4], int g, int h) {
    return (sc[g / 2] >> (6 * (g % 2) + 3 * h)) & 7;
}

}  // namespace

void dequantize_row_iq1_s(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ1_S*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        for (int g = 0; g < QK_K / 32; ++g) {
            const float dl = d * float(2 * ((x[i].qh[g] >> 12) & 7) + 1);
            const float delta = x[i].qh[g] & 0x8000 ? -kIq1Delta : kIq1Delta;
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint64_t e = iq::kIq1sGrid[iq1_s_index(x[i], g, l)];
                for (int j = 0; j < 8; ++j) y[j] = dl * (float(grid_value(e, j)) + delta);
            }
        }
    }
}

void dequantize_row_iq1_m(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ1_M*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i) {
        uint16_t sc[4];
        float d;
        iq1_m_scales(x[i], sc, &d);
        for (int g = 0; g < QK_K / 32; ++g) {
            for (int l = 0; l < 4; ++l, y += 8) {
                const float dl = d * float(2 * iq1_m_scale(sc, g, l / 2) + 1);
                const float delta = iq1_m_negative_shift(x[i], g, l) ? -kIq1Delta : kIq1Delta;
                const uint64_t e = iq::kIq1sGrid[iq1_m_index(x[i], g, l)];
                for (int j = 0; j < 8; ++j) y[j] = dl * (float(grid_value(e, j)) + delta);
            }
        }
    }
}

void vec_dot_iq1_s_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ1_S*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        int32_t isum = 0, ishift = 0;
        for (int g = 0; g < QK_K / 32; ++g) {
            const int32_t ls = 2 * ((x[i].qh[g] >> 12) & 7) + 1;
            const int32_t sign = x[i].qh[g] & 0x8000 ? -1 : 1;
            int32_t sub = 0;
            for (int l = 0; l < 4; ++l) sub += dot8(iq::kIq1sGrid[iq1_s_index(x[i], g, l)], y[i].qs + 32 * g + 8 * l);
            isum += ls * sub;
            ishift += ls * sign * (y[i].bsums[2 * g] + y[i].bsums[2 * g + 1]);
        }
        sum += (fp16_to_fp32(x[i].d) * y[i].d) * (float(isum) + kIq1Delta * float(ishift));
    }
    *s = sum;
}

void vec_dot_iq1_m_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ1_M*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        uint16_t sc[4];
        float d;
        iq1_m_scales(x[i], sc, &d);
        int32_t isum = 0, ishift = 0;
        for (int g = 0; g < QK_K / 32; ++g) {
            for (int l = 0; l < 4; ++l) {
                const int8_t* q = y[i].qs + 32 * g + 8 * l;
                int32_t qsum = 0;
                for (int j = 0; j < 8; ++j) qsum += q[j];
                const int32_t ls = 2 * iq1_m_scale(sc, g, l / 2) + 1;
                isum += ls * dot8(iq::kIq1sGrid[iq1_m_index(x[i], g, l)], q);
                ishift += ls * (iq1_m_negative_shift(x[i], g, l) ? -qsum : qsum);
            }
        }
        sum += (d * y[i].d) * (float(isum) + kIq1Delta * float(ishift));
    }
    *s = sum;
}

}  // namespace ggml
