// Dot products of one weight block with one activation block of its paired type, split in two as the
// CPU reference forms them (ggml/src/quants/*.cpp: vec_dot_*_ref): partial() adds the exact integer sums
// of part `part` of the block (kLanes parts; any split of an integer sum is exact), term() turns the
// block's integer sums into the float the reference adds to its running sum. Host and device (hd.h).
#pragma once

#include "dequantize.h"

namespace ggml::cuda {

#ifdef __CUDA_ARCH__
// Four bytes as one int, from an address aligned to 4 (ld32_4) or only to 2 (ld32_2).
__device__ __forceinline__ int ld32_4(const void* p) {
    return *(const int*)p;
}
__device__ __forceinline__ int ld32_2(const void* p) {
    const uint16_t* h = (const uint16_t*)p;
    return (int)(h[0] | ((uint32_t)h[1] << 16));
}
#endif

template <Type T>
struct QDot;

template <>
struct QDot<Type::Q4_0> {
    using Block = BlockQ4_0;
    using Act = BlockQ8_0;
    static constexpr int kQK = 32;    // values per block
    static constexpr int kLanes = 1;  // lanes sharing one block
    static GGML_HD void partial(const Block& x, const Act& y, int, int& isum, int&) {
#ifdef __CUDA_ARCH__
        // Four values per dp4a from 2-byte loads (the blocks are 18 and 34 bytes): the same exact integer
        // sum, sum((q - 8) * y) = sum(q * y) - 8 * sum(y).
        int s = 0, ysum = 0;
#pragma unroll
        for (int j = 0; j < 16; j += 4) {
            const int q = ld32_2(x.qs + j), ylo = ld32_2(y.qs + j), yhi = ld32_2(y.qs + 16 + j);
            s = __dp4a(q & 0x0f0f0f0f, ylo, s);
            s = __dp4a((q >> 4) & 0x0f0f0f0f, yhi, s);
            ysum = __dp4a(0x01010101, ylo, ysum);
            ysum = __dp4a(0x01010101, yhi, ysum);
        }
        isum += s - 8 * ysum;
#else
        for (int j = 0; j < QK4_0 / 2; ++j)
            isum += ((x.qs[j] & 0x0f) - 8) * y.qs[j] + ((x.qs[j] >> 4) - 8) * y.qs[j + QK4_0 / 2];
#endif
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
#ifdef __CUDA_ARCH__
        // Four products per dp4a from 2-byte loads (34-byte blocks); exact either way.
        int s = 0;
#pragma unroll
        for (int j = 0; j < 32; j += 4) s = __dp4a(ld32_2(x.qs + j), ld32_2(y.qs + j), s);
        isum += s;
#else
        for (int j = 0; j < QK8_0; ++j) isum += x.qs[j] * y.qs[j];
#endif
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
#ifdef __CUDA_ARCH__
        // Part p's 32 levels are the low (p even) or high nibbles of qs[32 (p / 2) ...]; blocks are 144
        // bytes (16-aligned), Q8_K's qs 4-aligned: four values per dp4a, the same exact sum.
        const uint8_t* q = x.qs + 32 * (part / 2);
        const int shift = 4 * (part & 1);
#pragma unroll
        for (int l = 0; l < 32; l += 4)
            sub = __dp4a((ld32_4(q + l) >> shift) & 0x0f0f0f0f, ld32_4(y.qs + 32 * part + l), sub);
#else
        for (int l = 0; l < 32; ++l) sub += q4k_level(x.qs, 32 * part + l) * y.qs[32 * part + l];
#endif
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
#ifdef __CUDA_ARCH__
        // As Q4_K, with bit `part` of qh[l] as each level's fifth bit; blocks are 176 bytes (16-aligned).
        const uint8_t* q = x.qs + 32 * (part / 2);
        const int shift = 4 * (part & 1);
#pragma unroll
        for (int l = 0; l < 32; l += 4) {
            const int lo = (ld32_4(q + l) >> shift) & 0x0f0f0f0f;
            const int hi = ((ld32_4(x.qh + l) >> part) & 0x01010101) << 4;
            sub = __dp4a(lo | hi, ld32_4(y.qs + 32 * part + l), sub);
        }
#else
        for (int l = 0; l < 32; ++l) sub += q5k_level(x, 32 * part + l) * y.qs[32 * part + l];
#endif
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
#ifdef __CUDA_ARCH__
        // Part p's 32 levels: nibbles of ql[64 (p / 4) + 32 (p & 1) ...] (the high ones for p % 4 >= 2) with
        // two bits of qh[32 (p / 4) ...] at 2 (p % 4); 210-byte blocks, so 2-byte loads. Four values per
        // dp4a; sum((q - 32) y) = sum(q y) - 32 sum(y), exact as the reference's per-value sum.
        const int c = part / 4, g = part % 4;
        const uint8_t* ql = x.ql + 64 * c + 32 * (g & 1);
        const uint8_t* qh = x.qh + 32 * c;
        const int shift = g < 2 ? 0 : 4;
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // sub-blocks 2p and 2p + 1, 16 values each
            int sub = 0, ysum = 0;
#pragma unroll
            for (int l = 16 * h; l < 16 * h + 16; l += 4) {
                const int lo = (ld32_2(ql + l) >> shift) & 0x0f0f0f0f;
                const int hi = ((ld32_2(qh + l) >> (2 * g)) & 0x03030303) << 4;
                const int yv = ld32_4(y.qs + 32 * part + l);
                sub = __dp4a(lo | hi, yv, sub);
                ysum = __dp4a(0x01010101, yv, ysum);
            }
            isum += x.scales[2 * part + h] * (sub - 32 * ysum);
        }
#else
        for (int j = 2 * part; j < 2 * part + 2; ++j) {
            int sub = 0;
            for (int l = 0; l < 16; ++l) sub += (q6k_level(x, 16 * j + l) - 32) * y.qs[16 * j + l];
            isum += x.scales[j] * sub;
        }
#endif
    }
    static GGML_HD float term(const Block& x, const Act& y, int isum, int) {
        return (y.d * h2f(x.d)) * float(isum);
    }
};

}  // namespace ggml::cuda
