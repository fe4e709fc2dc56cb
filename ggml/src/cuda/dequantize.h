// Value j of a row of any supported type as float: exactly the value the CPU's to_float gives (same
// formula, same rounding steps; see ggml/src/quants/*.cpp). Used by get_rows, copies, attention values
// and the f16 weights of the cuBLAS path. Host and device (hd.h).
#pragma once

#include "ggml/quants.h"
#include "ggml/types.h"
#include "half.h"

namespace ggml::cuda {

GGML_HD uint32_t load_qh(const uint8_t qh[4]) {
    return uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
}

// 5-bit level of value j (0..31) of a Q5_0/Q5_1 block.
GGML_HD int level_q5(const uint8_t* qs, uint32_t qh, int j) {
    const int nib = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
    return nib | int((qh >> j) & 1) << 4;
}

// 6-bit scale and min of sub-block j (0..7) of Q4_K/Q5_K (unpack_k4_scales).
GGML_HD void k4_scale_min(const uint8_t* q, int j, int& sc, int& mn) {
    if (j < 4) {
        sc = q[j] & 63;
        mn = q[j + 4] & 63;
    } else {
        sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
        mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Signed 6-bit scale of sub-block j (0..15) of Q3_K (unpack_q3_k_scales).
GGML_HD int q3k_scale(const uint8_t* q, int j) {
    const int lo = j < 8 ? (q[j] & 0x0f) : (q[j - 8] >> 4);
    const int hi = (q[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}

// Level (0..3) of value e of a Q2_K block; with the Q3_K high bit, 0..7.
GGML_HD int q2k_level(const uint8_t* qs, int e) {
    const int c = e / 128, g = (e % 128) / 32, l = e % 32;
    return (qs[32 * c + l] >> (2 * g)) & 3;
}

GGML_HD int q3k_level(const BlockQ3_K& b, int e) {
    return q2k_level(b.qs, e) | (((b.hmask[e % 32] >> (e / 32)) & 1) << 2);
}

GGML_HD int q4k_level(const uint8_t* qs, int e) {
    const int c = e / 64, l = e % 32;
    return (e % 64) < 32 ? (qs[32 * c + l] & 0x0f) : (qs[32 * c + l] >> 4);
}

GGML_HD int q5k_level(const BlockQ5_K& b, int e) {
    return q4k_level(b.qs, e) | (((b.qh[e % 32] >> (e / 32)) & 1) << 4);
}

GGML_HD int q6k_level(const BlockQ6_K& b, int e) {
    const int c = e / 128, g = (e % 128) / 32, l = e % 32;
    const uint8_t byte = b.ql[64 * c + l + 32 * (g & 1)];
    const int low = g < 2 ? (byte & 0x0f) : (byte >> 4);
    const int high = (b.qh[32 * c + l] >> (2 * g)) & 3;
    return low | (high << 4);
}

// Value j of the row at `row` (blocks stored contiguously, as in every row of our tensors).
GGML_HD float dequantize(Type t, const char* row, int64_t j) {
    switch (t) {
        case Type::F32:
            return ((const float*)row)[j];
        case Type::F16:
            return h2f(((const uint16_t*)row)[j]);
        case Type::BF16:
            return bf2f(((const uint16_t*)row)[j]);
        case Type::Q4_0: {
            const BlockQ4_0& b = ((const BlockQ4_0*)row)[j / QK4_0];
            const int k = int(j % QK4_0);
            const int q = k < 16 ? (b.qs[k] & 0x0f) : (b.qs[k - 16] >> 4);
            return float(q - 8) * h2f(b.d);
        }
        case Type::Q4_1: {
            const BlockQ4_1& b = ((const BlockQ4_1*)row)[j / QK4_1];
            const int k = int(j % QK4_1);
            const int q = k < 16 ? (b.qs[k] & 0x0f) : (b.qs[k - 16] >> 4);
            return float(q) * h2f(b.d) + h2f(b.m);
        }
        case Type::Q5_0: {
            const BlockQ5_0& b = ((const BlockQ5_0*)row)[j / QK5_0];
            return float(level_q5(b.qs, load_qh(b.qh), int(j % QK5_0)) - 16) * h2f(b.d);
        }
        case Type::Q5_1: {
            const BlockQ5_1& b = ((const BlockQ5_1*)row)[j / QK5_1];
            return float(level_q5(b.qs, load_qh(b.qh), int(j % QK5_1))) * h2f(b.d) + h2f(b.m);
        }
        case Type::Q8_0: {
            const BlockQ8_0& b = ((const BlockQ8_0*)row)[j / QK8_0];
            return float(b.qs[j % QK8_0]) * h2f(b.d);
        }
        case Type::Q8_1: {
            const BlockQ8_1& b = ((const BlockQ8_1*)row)[j / QK8_1];
            return float(b.qs[j % QK8_1]) * h2f(b.d);
        }
        case Type::Q2_K: {
            const BlockQ2_K& b = ((const BlockQ2_K*)row)[j / QK_K];
            const int e = int(j % QK_K), sc = b.scales[e / 16];
            const float dl = h2f(b.d) * float(sc & 0xf);
            const float ml = h2f(b.dmin) * float(sc >> 4);
            return dl * float(q2k_level(b.qs, e)) - ml;
        }
        case Type::Q3_K: {
            const BlockQ3_K& b = ((const BlockQ3_K*)row)[j / QK_K];
            const int e = int(j % QK_K);
            const float dl = h2f(b.d) * float(q3k_scale(b.scales, e / 16));
            return dl * float(q3k_level(b, e) - 4);
        }
        case Type::Q4_K: {
            const BlockQ4_K& b = ((const BlockQ4_K*)row)[j / QK_K];
            const int e = int(j % QK_K);
            int sc, mn;
            k4_scale_min(b.scales, e / 32, sc, mn);
            const float dl = h2f(b.d) * float(sc);
            const float ml = h2f(b.dmin) * float(mn);
            return dl * float(q4k_level(b.qs, e)) - ml;
        }
        case Type::Q5_K: {
            const BlockQ5_K& b = ((const BlockQ5_K*)row)[j / QK_K];
            const int e = int(j % QK_K);
            int sc, mn;
            k4_scale_min(b.scales, e / 32, sc, mn);
            const float dl = h2f(b.d) * float(sc);
            const float ml = h2f(b.dmin) * float(mn);
            return dl * float(q5k_level(b, e)) - ml;
        }
        case Type::Q6_K: {
            const BlockQ6_K& b = ((const BlockQ6_K*)row)[j / QK_K];
            const int e = int(j % QK_K);
            return h2f(b.d) * float(b.scales[e / 16]) * float(q6k_level(b, e) - 32);
        }
        case Type::Q8_K: {
            const BlockQ8_K& b = ((const BlockQ8_K*)row)[j / QK_K];
            return b.d * float(b.qs[j % QK_K]);
        }
        case Type::IQ4_NL: {
            const BlockIQ4_NL& b = ((const BlockIQ4_NL*)row)[j / QK4_NL];
            const int k = int(j % QK4_NL);
            const int q = k < 16 ? (b.qs[k] & 0x0f) : (b.qs[k - 16] >> 4);
            return h2f(b.d) * float(iq4nl_level(q));
        }
        default:
            return 0.0f;  // excluded by supports_op (types.cpp: can_dequantize)
    }
}

}  // namespace ggml::cuda
