// IQ2_XXS, IQ2_XS, IQ2_S: super-blocks of 256 values in 8 groups of 32; every 8 values are one entry of a
// grid of unsigned magnitudes (iq_grids.h) with a sign per value, scaled by d * (0.5 + s) / 4 per group
// (or half-group). Dot products: the exact integer sum over the super-block of (2 s + 1) * grid * sign * q,
// then one float term ((dx * dy) * isum) / 8 added to the running sum.
#include <cassert>
#include <cstring>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"

namespace ggml {

namespace {

// y[j] = db * grid byte j, negated where bit j of signs is set.
void put8(float db, uint64_t grid, uint8_t signs, float* y) {
    for (int j = 0; j < 8; ++j) y[j] = db * float(iq::grid_byte(grid, j)) * ((signs >> j) & 1 ? -1.f : 1.f);
}

// sum over 8 values of grid * sign * q.
int32_t dot8(uint64_t grid, uint8_t signs, const int8_t* q) {
    int32_t s = 0;
    for (int j = 0; j < 8; ++j) {
        const int32_t v = iq::grid_byte(grid, j) * q[j];
        s += (signs >> j) & 1 ? -v : v;
    }
    return s;
}

uint32_t load_u32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// The 32-bit words of group g of an IQ2_XXS block: 4 grid indices, then signs and scale.
void iq2_xxs_group(const BlockIQ2_XXS& b, int g, uint32_t* idx, uint32_t* aux) {
    *idx = load_u32(b.qs + 4 * g);
    *aux = load_u32(b.qs + 4 * g + 2);
}

// Index (10 bits) of entry l of group g of an IQ2_S block.
int iq2_s_index(const BlockIQ2_S& b, int g, int l) {
    return b.qs[4 * g + l] | ((b.qh[g] << (8 - 2 * l)) & 0x300);
}

}  // namespace

void dequantize_row_iq2_xxs(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ2_XXS*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        for (int g = 0; g < QK_K / 32; ++g) {
            uint32_t idx, aux;
            iq2_xxs_group(x[i], g, &idx, &aux);
            const float db = d * (0.5f + float(aux >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l, y += 8)
                put8(db, iq::kIq2xxsGrid[(idx >> (8 * l)) & 255], iq::signs_of(aux >> (7 * l)), y);
        }
    }
}

void dequantize_row_iq2_xs(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ2_XS*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        for (int g = 0; g < QK_K / 32; ++g) {
            const float db[2] = {d * (0.5f + float(x[i].scales[g] & 0xf)) * 0.25f,
                                 d * (0.5f + float(x[i].scales[g] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint16_t q = x[i].qs[4 * g + l];
                put8(db[l / 2], iq::kIq2xsGrid[q & 511], iq::signs_of(q >> 9), y);
            }
        }
    }
}

void dequantize_row_iq2_s(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ2_S*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        const uint8_t* signs = x[i].qs + QK_K / 8;
        for (int g = 0; g < QK_K / 32; ++g) {
            const float db[2] = {d * (0.5f + float(x[i].scales[g] & 0xf)) * 0.25f,
                                 d * (0.5f + float(x[i].scales[g] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, y += 8)
                put8(db[l / 2], iq::kIq2sGrid[iq2_s_index(x[i], g, l)], signs[4 * g + l], y);
        }
    }
}

void vec_dot_iq2_xxs_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ2_XXS*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        int32_t isum = 0;
        for (int g = 0; g < QK_K / 32; ++g) {
            uint32_t idx, aux;
            iq2_xxs_group(x[i], g, &idx, &aux);
            int32_t sub = 0;
            for (int l = 0; l < 4; ++l)
                sub += dot8(iq::kIq2xxsGrid[(idx >> (8 * l)) & 255], iq::signs_of(aux >> (7 * l)),
                            y[i].qs + 32 * g + 8 * l);
            isum += int32_t(2 * (aux >> 28) + 1) * sub;
        }
        sum += ((fp16_to_fp32(x[i].d) * y[i].d) * float(isum)) * 0.125f;
    }
    *s = sum;
}

void vec_dot_iq2_xs_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ2_XS*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        int32_t isum = 0;
        for (int g = 0; g < QK_K / 32; ++g) {
            int32_t sub[2] = {0, 0};
            for (int l = 0; l < 4; ++l) {
                const uint16_t q = x[i].qs[4 * g + l];
                sub[l / 2] += dot8(iq::kIq2xsGrid[q & 511], iq::signs_of(q >> 9), y[i].qs + 32 * g + 8 * l);
            }
            isum += (2 * (x[i].scales[g] & 0xf) + 1) * sub[0] + (2 * (x[i].scales[g] >> 4) + 1) * sub[1];
        }
        sum += ((fp16_to_fp32(x[i].d) * y[i].d) * float(isum)) * 0.125f;
    }
    *s = sum;
}

void vec_dot_iq2_s_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ2_S*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const uint8_t* signs = x[i].qs + QK_K / 8;
        int32_t isum = 0;
        for (int g = 0; g < QK_K / 32; ++g) {
            int32_t sub[2] = {0, 0};
            for (int l = 0; l < 4; ++l)
                sub[l / 2] +=
                    dot8(iq::kIq2sGrid[iq2_s_index(x[i], g, l)], signs[4 * g + l], y[i].qs + 32 * g + 8 * l);
            isum += (2 * (x[i].scales[g] & 0xf) + 1) * sub[0] + (2 * (x[i].scales[g] >> 4) + 1) * sub[1];
        }
        sum += ((fp16_to_fp32(x[i].d) * y[i].d) * float(isum)) * 0.125f;
    }
    *s = sum;
}

}  // namespace ggml
