// Block quantizers on the device, one thread per block, repeating the CPU reference quantizers step by
// step (ggml/src/quants/*.cpp) so that they write the same bytes: the KV cache formats (set_rows, copies)
// and the activation formats of mul_mat (Q8_0, Q8_1, Q8_K). Host and device (hd.h).
#pragma once

#include <cfloat>

#include "ggml/quants.h"
#include "ggml/types.h"
#include "half.h"

namespace ggml::cuda {

// Largest magnitude of n values and the first value that has it (its sign picks the sign of d).
GGML_HD void signed_absmax(const float* x, int n, float& amax, float& max) {
    amax = 0.0f;
    max = 0.0f;
    for (int j = 0; j < n; ++j) {
        const float a = fabsf(x[j]);
        if (a > amax) {
            amax = a;
            max = x[j];
        }
    }
}

GGML_HD float clampf(float v, float lo, float hi) {
    return fminf(fmaxf(v, lo), hi);
}

GGML_HD void quantize_q4_0(const float* x, BlockQ4_0& y) {
    float amax, max;
    signed_absmax(x, QK4_0, amax, max);
    const float d = max / -8;
    const float id = d ? 1.0f / d : 0.0f;
    y.d = f2h(d);
    for (int j = 0; j < QK4_0 / 2; ++j) {
        const auto lo = uint8_t(clampf(x[j] * id + 8.5f, 0.0f, 15.0f));
        const auto hi = uint8_t(clampf(x[j + QK4_0 / 2] * id + 8.5f, 0.0f, 15.0f));
        y.qs[j] = uint8_t(lo | (hi << 4));
    }
}

GGML_HD void quantize_q4_1(const float* x, BlockQ4_1& y) {
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < QK4_1; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / 15;
    const float id = d ? 1.0f / d : 0.0f;
    y.d = f2h(d);
    y.m = f2h(min);
    for (int j = 0; j < QK4_1 / 2; ++j) {
        const auto lo = uint8_t(clampf((x[j] - min) * id + 0.5f, 0.0f, 15.0f));
        const auto hi = uint8_t(clampf((x[j + QK4_1 / 2] - min) * id + 0.5f, 0.0f, 15.0f));
        y.qs[j] = uint8_t(lo | (hi << 4));
    }
}

GGML_HD void store_qh(uint8_t out[4], uint32_t qh) {
    out[0] = uint8_t(qh);
    out[1] = uint8_t(qh >> 8);
    out[2] = uint8_t(qh >> 16);
    out[3] = uint8_t(qh >> 24);
}

GGML_HD void quantize_q5_0(const float* x, BlockQ5_0& y) {
    float amax, max;
    signed_absmax(x, QK5_0, amax, max);
    const float d = max / -16;
    const float id = d ? 1.0f / d : 0.0f;
    y.d = f2h(d);
    uint32_t qh = 0;
    for (int j = 0; j < QK5_0 / 2; ++j) {
        const auto lo = uint32_t(clampf(x[j] * id + 16.5f, 0.0f, 31.0f));
        const auto hi = uint32_t(clampf(x[j + QK5_0 / 2] * id + 16.5f, 0.0f, 31.0f));
        y.qs[j] = uint8_t((lo & 0x0f) | ((hi & 0x0f) << 4));
        qh |= (lo >> 4) << j;
        qh |= (hi >> 4) << (j + QK5_0 / 2);
    }
    store_qh(y.qh, qh);
}

GGML_HD void quantize_q5_1(const float* x, BlockQ5_1& y) {
    float min = x[0], max = x[0];
    for (int j = 1; j < QK5_1; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / 31;
    const float id = d ? 1.0f / d : 0.0f;
    y.d = f2h(d);
    y.m = f2h(min);
    uint32_t qh = 0;
    for (int j = 0; j < QK5_1 / 2; ++j) {
        const auto lo = uint32_t(clampf((x[j] - min) * id + 0.5f, 0.0f, 31.0f));
        const auto hi = uint32_t(clampf((x[j + QK5_1 / 2] - min) * id + 0.5f, 0.0f, 31.0f));
        y.qs[j] = uint8_t((lo & 0x0f) | ((hi & 0x0f) << 4));
        qh |= (lo >> 4) << j;
        qh |= (hi >> 4) << (j + QK5_1 / 2);
    }
    store_qh(y.qh, qh);
}

// Scale of 32 values for Q8_0/Q8_1 (amax / 127) and its inverse.
GGML_HD float q8_scale(const float* x, float& id) {
    float amax = 0.0f;
    for (int j = 0; j < QK8_0; ++j) amax = fmaxf(amax, fabsf(x[j]));
    const float d = amax / 127;
    id = d ? 1.0f / d : 0.0f;
    return d;
}

// roundf rounds half away from zero, as std::round does.
GGML_HD int8_t q8_level(float v) {
    return int8_t(clampf(roundf(v), -127.0f, 127.0f));
}

GGML_HD void quantize_q8_0(const float* x, BlockQ8_0& y) {
    float id;
    y.d = f2h(q8_scale(x, id));
    for (int j = 0; j < QK8_0; ++j) y.qs[j] = q8_level(x[j] * id);
}

GGML_HD void quantize_q8_1(const float* x, BlockQ8_1& y) {
    float id;
    const float d = q8_scale(x, id);
    y.d = f2h(d);
    int sum = 0;
    for (int j = 0; j < QK8_1; ++j) {
        y.qs[j] = q8_level(x[j] * id);
        sum += y.qs[j];
    }
    y.s = f2h(float(sum) * d);
}

GGML_HD void quantize_q8_K(const float* x, BlockQ8_K& y) {
    float amax, max;
    signed_absmax(x, QK_K, amax, max);
    if (!amax) {
        y.d = 0.0f;
        for (int j = 0; j < QK_K; ++j) y.qs[j] = 0;
        for (int j = 0; j < QK_K / 16; ++j) y.bsums[j] = 0;
        return;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < QK_K; ++j) {
        const int q = round_even(iscale * x[j]);
        y.qs[j] = int8_t(q < 127 ? q : 127);
    }
    for (int j = 0; j < QK_K / 16; ++j) {
        int sum = 0;
        for (int l = 0; l < 16; ++l) sum += y.qs[16 * j + l];
        y.bsums[j] = int16_t(sum);
    }
    y.d = 1 / iscale;
}

// Index of the IQ4_NL level nearest to v (ties go up), comparing 2v with sums of neighbours (exact).
GGML_HD int iq4nl_nearest(float v) {
    const float v2 = v + v;
    int idx = 0;
    for (int step = 8; step > 0; step >>= 1) {
        const int j = idx + step;
        if (v2 >= float(iq4nl_level(j - 1) + iq4nl_level(j))) idx = j;
    }
    return idx;
}

// ggml's quantize_row_iq4_nl_ref: levels picked at d = max / -127, then d fitted by least squares.
GGML_HD void quantize_iq4_nl(const float* x, BlockIQ4_NL& y) {
    uint8_t L[QK4_NL] = {};
    float amax, max;
    signed_absmax(x, QK4_NL, amax, max);
    float d = 0.0f;
    if (amax >= 1e-15f) {
        const float v0 = iq4nl_level(0);
        d = max / v0;
        const float id = 1 / d;
        float sumqx = 0, sumq2 = 0;
        for (int j = 0; j < QK4_NL; ++j) {
            L[j] = uint8_t(iq4nl_nearest(id * x[j]));
            const float q = iq4nl_level(L[j]);
            const float w = x[j] * x[j];
            sumqx += w * q * x[j];
            sumq2 += w * q * q;
        }
        d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
    }
    y.d = f2h(d);
    for (int j = 0; j < QK4_NL / 2; ++j) y.qs[j] = uint8_t(L[j] | (L[j + QK4_NL / 2] << 4));
}

// One block of type t from block_size(t) floats at x (or one value for F32/F16/BF16); y is block `ib` of
// the output row. Returns false for types without a device quantizer (excluded by supports_op).
GGML_HD bool quantize_block(Type t, const float* x, char* row, int64_t ib) {
    switch (t) {
        case Type::F32:
            ((float*)row)[ib] = x[0];
            return true;
        case Type::F16:
            ((uint16_t*)row)[ib] = f2h(x[0]);
            return true;
        case Type::BF16:
            ((uint16_t*)row)[ib] = f2bf(x[0]);
            return true;
        case Type::Q4_0:
            quantize_q4_0(x, ((BlockQ4_0*)row)[ib]);
            return true;
        case Type::Q4_1:
            quantize_q4_1(x, ((BlockQ4_1*)row)[ib]);
            return true;
        case Type::Q5_0:
            quantize_q5_0(x, ((BlockQ5_0*)row)[ib]);
            return true;
        case Type::Q5_1:
            quantize_q5_1(x, ((BlockQ5_1*)row)[ib]);
            return true;
        case Type::Q8_0:
            quantize_q8_0(x, ((BlockQ8_0*)row)[ib]);
            return true;
        case Type::Q8_1:
            quantize_q8_1(x, ((BlockQ8_1*)row)[ib]);
            return true;
        case Type::Q8_K:
            quantize_q8_K(x, ((BlockQ8_K*)row)[ib]);
            return true;
        case Type::IQ4_NL:
            quantize_iq4_nl(x, ((BlockIQ4_NL*)row)[ib]);
            return true;
        default:
            return false;
    }
}

}  // namespace ggml::cuda
