// IQ3_XXS and IQ3_S: super-blocks of 256 values in 8 groups of 32; every 4 values are one entry of a grid
// of unsigned magnitudes (iq_grids.h), every value has a sign. Dequantizing and dot products; the
// quantizers are in iq3_quantize.cpp. Dot products: the exact integer sum over the super-block of
// ls * grid * sign * q (ls = 2 s + 1), then one float term (dx * dy) * isum [/ 4 for IQ3_XXS].
#include <cassert>
#include <cstring>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"

namespace ggml {

namespace {

uint32_t load_u32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Values 8l .. 8l + 7 of a group: two grid entries of 4, signs bit j for value j.
void put8(float db, uint32_t g1, uint32_t g2, uint8_t signs, float* y) {
    for (int j = 0; j < 4; ++j) {
        y[j] = db * float(iq::grid_byte(g1, j)) * ((signs >> j) & 1 ? -1.f : 1.f);
        y[j + 4] = db * float(iq::grid_byte(g2, j)) * ((signs >> (j + 4)) & 1 ? -1.f : 1.f);
    }
}

int32_t dot8(uint32_t g1, uint32_t g2, uint8_t signs, const int8_t* q) {
    int32_t s = 0;
    for (int j = 0; j < 8; ++j) {
        const int32_t v = iq::grid_byte(j < 4 ? g1 : g2, j % 4) * q[j];
        s += (signs >> j) & 1 ? -v : v;
    }
    return s;
}

// Index (9 bits) of entry k (0..7) of group g of an IQ3_S block.
int iq3_s_index(const BlockIQ3_S& b, int g, int k) {
    return b.qs[8 * g + k] | (((b.qh[g] >> k) & 1) << 8);
}

}  // namespace

void dequantize_row_iq3_xxs(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ3_XXS*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        const uint8_t* qs = x[i].qs;
        for (int g = 0; g < QK_K / 32; ++g) {
            const uint32_t aux = load_u32(qs + QK_K / 4 + 4 * g);
            const float db = d * (0.5f + float(aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l, y += 8)
                put8(db, iq::kIq3xxsGrid[qs[8 * g + 2 * l]], iq::kIq3xxsGrid[qs[8 * g + 2 * l + 1]],
                     iq::signs_of(aux >> (7 * l)), y);
        }
    }
}

void dequantize_row_iq3_s(const void* vx, float* y, int64_t n) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ3_S*>(vx);
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        for (int g = 0; g < QK_K / 32; ++g) {
            const int s = (x[i].scales[g / 2] >> (4 * (g % 2))) & 0xf;
            const float db = d * float(1 + 2 * s);
            for (int l = 0; l < 4; ++l, y += 8)
                put8(db, iq::kIq3sGrid[iq3_s_index(x[i], g, 2 * l)], iq::kIq3sGrid[iq3_s_index(x[i], g, 2 * l + 1)],
                     x[i].signs[4 * g + l], y);
        }
    }
}

void vec_dot_iq3_xxs_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ3_XXS*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        const uint8_t* qs = x[i].qs;
        int32_t isum = 0;
        for (int g = 0; g < QK_K / 32; ++g) {
            const uint32_t aux = load_u32(qs + QK_K / 4 + 4 * g);
            int32_t sub = 0;
            for (int l = 0; l < 4; ++l)
                sub += dot8(iq::kIq3xxsGrid[qs[8 * g + 2 * l]], iq::kIq3xxsGrid[qs[8 * g + 2 * l + 1]],
                            iq::signs_of(aux >> (7 * l)), y[i].qs + 32 * g + 8 * l);
            isum += int32_t(2 * (aux >> 28) + 1) * sub;
        }
        sum += ((fp16_to_fp32(x[i].d) * y[i].d) * float(isum)) * 0.25f;
    }
    *s = sum;
}

void vec_dot_iq3_s_q8_K_ref(int64_t n, float* s, const void* vx, const void* vy) {
    assert(n % QK_K == 0);
    const auto* x = static_cast<const BlockIQ3_S*>(vx);
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    float sum = 0;
    for (int64_t i = 0; i < n / QK_K; ++i) {
        int32_t isum = 0;
        for (int g = 0; g < QK_K / 32; ++g) {
            int32_t sub = 0;
            for (int l = 0; l < 4; ++l)
                sub += dot8(iq::kIq3sGrid[iq3_s_index(x[i], g, 2 * l)], iq::kIq3sGrid[iq3_s_index(x[i], g, 2 * l + 1)],
                            x[i].signs[4 * g + l], y[i].qs + 32 * g + 8 * l);
            isum += (1 + 2 * ((x[i].scales[g / 2] >> (4 * (g % 2))) & 0xf)) * sub;
        }
        sum += (fp16_to_fp32(x[i].d) * y[i].d) * float(isum);
    }
    *s = sum;
}

}  // namespace ggml
