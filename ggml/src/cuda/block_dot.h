// Dot products of one weight block with one activation block of its paired type, split in two as the
// CPU reference forms them (ggml/src/quants/*.cpp: vec_dot_*_ref): partial() adds the exact integer sums
// of part `part` of the block (kLanes parts; any split of an integer sum is exact), term() turns the
// block's integer sums into the float the reference adds to its running sum. Host and device (hd.h).
#pragma once

#include "dequantize.h"

namespace ggml::cuda {

template <Type T>
struct QDot;

template <>
struct QDot<Type::Q4_0> {
    using Block = BlockQ4_0;
    using Act = BlockQ8_0;
    static constexpr int kQK = 32;    // values per block
    static constexpr int kLanes = 1;  // lanes sharing one block
    static GGML_HD void partial(const Block& x, const Act& y, int, int& isum, int&) {
        for (int j = 0; j < QK4_0 / 2; ++j)
            isum += ((x.qs[j] & 0x0f) - 8) * y.qs[j] + ((x.qs[j] >> 4) - 8) * y.qs[j + QK4_0 / 2];
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int) {
        return (h2f(x.d) * h2f(y.d)) * float(isum);
    }
};

template <>
struct QDot<Type::Q4_1> {
    using Block = BlockQ4_1;
    using Act = BlockQ8_1;
    static constexpr int kQK = 32;
    static constexpr int kLanes = 1;
    static GGML_HD void partial(const Block& x, const Act& y, int, int& isum, int&) {
        for (int j = 0; j < QK4_1 / 2; ++j)
            isum += (x.qs[j] & 0x0f) * y.qs[j] + (x.qs[j] >> 4) * y.qs[j + QK4_1 / 2];
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int) {
        return (h2f(x.d) * h2f(y.d)) * float(isum) + h2f(x.m) * h2f(y.s);
    }
};

template <>
struct QDot<Type::Q5_0> {
    using Block = BlockQ5_0;
    using Act = BlockQ8_0;
    static constexpr int kQK = 32;
    static constexpr int kLanes = 1;
    static GGML_HD void partial(const Block& x, const Act& y, int, int& isum, int&) {
        const uint32_t qh = load_qh(x.qh);
        for (int j = 0; j < QK5_0; ++j) isum += (level_q5(x.qs, qh, j) - 16) * y.qs[j];
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int) {
        return (h2f(x.d) * h2f(y.d)) * float(isum);
    }
};

template <>
struct QDot<Type::Q5_1> {
    using Block = BlockQ5_1;
    using Act = BlockQ8_1;
    static constexpr int kQK = 32;
    static constexpr int kLanes = 1;
    static GGML_HD void partial(const Block& x, const Act& y, int, int& isum, int&) {
        const uint32_t qh = load_qh(x.qh);
        for (int j = 0; j < QK5_1; ++j) isum += level_q5(x.qs, qh, j) * y.qs[j];
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int) {
        return (h2f(x.d) * h2f(y.d)) * float(isum) + h2f(x.m) * h2f(y.s);
    }
};

template <>
struct QDot<Type::Q8_0> {
    using Block = BlockQ8_0;
    using Act = BlockQ8_0;
    static constexpr int kQK = 32;
    static constexpr int kLanes = 1;
    static GGML_HD void partial(const Block& x, const Act& y, int, int& isum, int&) {
        for (int j = 0; j < QK8_0; ++j) isum += x.qs[j] * y.qs[j];
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int) {
        return (h2f(x.d) * h2f(y.d)) * float(isum);
    }
};

template <>
struct QDot<Type::IQ4_NL> {
    using Block = BlockIQ4_NL;
    using Act = BlockQ8_0;
    static constexpr int kQK = 32;
    static constexpr int kLanes = 1;
    static GGML_HD void partial(const Block& x, const Act& y, int, int& isum, int&) {
        for (int j = 0; j < QK4_NL / 2; ++j)
            isum += iq4nl_level(x.qs[j] & 0x0f) * y.qs[j] + iq4nl_level(x.qs[j] >> 4) * y.qs[j + QK4_NL / 2];
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int) {
        return (h2f(x.d) * h2f(y.d)) * float(isum);
    }
};

// K-quants: 8 lanes per super-block of 256, lane `part` takes values [32 part, 32 part + 32).
template <>
struct QDot<Type::Q2_K> {
    using Block = BlockQ2_K;
    using Act = BlockQ8_K;
    static constexpr int kQK = QK_K;
    static constexpr int kLanes = 8;
    static GGML_HD void partial(const Block& x, const Act& y, int part, int& isum, int& imins) {
        for (int j = 2 * part; j < 2 * part + 2; ++j) {
            int sub = 0;
            for (int l = 0; l < 16; ++l) sub += q2k_level(x.qs, 16 * j + l) * y.qs[16 * j + l];
            isum += (x.scales[j] & 0xf) * sub;
            imins += (x.scales[j] >> 4) * y.bsums[j];
        }
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int imins) {
        return (y.d * h2f(x.d)) * float(isum) - (y.d * h2f(x.dmin)) * float(imins);
    }
};

template <>
struct QDot<Type::Q3_K> {
    using Block = BlockQ3_K;
    using Act = BlockQ8_K;
    static constexpr int kQK = QK_K;
    static constexpr int kLanes = 8;
    static GGML_HD void partial(const Block& x, const Act& y, int part, int& isum, int&) {
        for (int j = 2 * part; j < 2 * part + 2; ++j) {
            int sub = 0;
            for (int l = 0; l < 16; ++l) sub += (q3k_level(x, 16 * j + l) - 4) * y.qs[16 * j + l];
            isum += q3k_scale(x.scales, j) * sub;
        }
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int) {
        return (y.d * h2f(x.d)) * float(isum);
    }
};

template <>
struct QDot<Type::Q4_K> {
    using Block = BlockQ4_K;
    using Act = BlockQ8_K;
    static constexpr int kQK = QK_K;
    static constexpr int kLanes = 8;
    static GGML_HD void partial(const Block& x, const Act& y, int part, int& isum, int& imins) {
        int sub = 0;
        for (int l = 0; l < 32; ++l) sub += q4k_level(x.qs, 32 * part + l) * y.qs[32 * part + l];
        int sc, mn;
        k4_scale_min(x.scales, part, sc, mn);
        isum += sc * sub;
        imins += mn * (y.bsums[2 * part] + y.bsums[2 * part + 1]);
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int imins) {
        return (y.d * h2f(x.d)) * float(isum) - (y.d * h2f(x.dmin)) * float(imins);
    }
};

template <>
struct QDot<Type::Q5_K> {
    using Block = BlockQ5_K;
    using Act = BlockQ8_K;
    static constexpr int kQK = QK_K;
    static constexpr int kLanes = 8;
    static GGML_HD void partial(const Block& x, const Act& y, int part, int& isum, int& imins) {
        int sub = 0;
        for (int l = 0; l < 32; ++l) sub += q5k_level(x, 32 * part + l) * y.qs[32 * part + l];
        int sc, mn;
        k4_scale_min(x.scales, part, sc, mn);
        isum += sc * sub;
        imins += mn * (y.bsums[2 * part] + y.bsums[2 * part + 1]);
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int imins) {
        return (y.d * h2f(x.d)) * float(isum) - (y.d * h2f(x.dmin)) * float(imins);
    }
};

template <>
struct QDot<Type::Q6_K> {
    using Block = BlockQ6_K;
    using Act = BlockQ8_K;
    static constexpr int kQK = QK_K;
    static constexpr int kLanes = 8;
    static GGML_HD void partial(const Block& x, const Act& y, int part, int& isum, int&) {
        for (int j = 2 * part; j < 2 * part + 2; ++j) {
            int sub = 0;
            for (int l = 0; l < 16; ++l) sub += (q6k_level(x, 16 * j + l) - 32) * y.qs[16 * j + l];
            isum += x.scales[j] * sub;
        }
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int) {
        return (y.d * h2f(x.d)) * float(isum);
    }
};

}  // namespace ggml::cuda
