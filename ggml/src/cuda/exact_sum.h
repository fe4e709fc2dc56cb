// Sum of floats in [0, 1] (softmax numerators) in 128-bit fixed point with 96 fraction bits. Integer
// addition is exact and associative, so the sum is the same in any order or grouping: a row's softmax
// does not depend on where its cells sit among other sequences' (masked, exactly zero) cells. Only
// values below 2^-72 lose low bits, far under the double result's precision.
#pragma once

#include "hd.h"

namespace ggml::cuda {

struct ExactSum {
    unsigned long long lo = 0, hi = 0;

    GGML_HD void add(float e) {
        const uint32_t bits = as_uint(e);
        const int ex = int((bits >> 23) & 0xff);
        if (ex == 0 && (bits & 0x7fffff) == 0) return;
        const unsigned long long mant = (bits & 0x7fffff) | (ex ? 0x800000u : 0u);
        const int shift = (ex ? ex : 1) - 150 + 96;  // value * 2^96 = mant * 2^shift
        unsigned long long add_lo = 0, add_hi = 0;
        if (shift >= 64) {
            add_hi = mant << (shift - 64);
        } else if (shift > 0) {
            add_lo = mant << shift;
            add_hi = shift > 40 ? mant >> (64 - shift) : 0;  // mant has 24 bits
        } else if (shift > -24) {
            add_lo = mant >> -shift;
        }
        merge(add_lo, add_hi);
    }
    GGML_HD void merge(unsigned long long l, unsigned long long h) {
        const unsigned long long s = lo + l;
        hi += h + (s < lo ? 1 : 0);
        lo = s;
    }
    GGML_HD double value() const {
        return ((double)hi * 18446744073709551616.0 + (double)lo) * 1.2621774483536189e-29;  // 2^64, 2^-96
    }
};

}  // namespace ggml::cuda
