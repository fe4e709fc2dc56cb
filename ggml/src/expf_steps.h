// The constants of glibc's expf (sysdeps/ieee754/flt-32/e_expf.c, the variant glibc runs on CPUs with FMA):
// a handful of double-precision steps around a 32-entry table of 2^(i/32). The CPU's vectorized exp
// (cpu/kernels_rows.cpp) and the CUDA backend's exp_f32 (cuda/hd.h) both take them from here, so that e^x
// has the same bits on the CPU and on the device as the C library's std::exp.
#pragma once

#include <cstdint>

// 2^(i/32) as bits minus i << 47 (glibc's __exp2f_data.tab): a list, for arrays in host and device memory.
#define GGML_EXPF_TABLE                                                                                     \
    {                                                                                                       \
        0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b, \
            0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715,                 \
            0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27,                 \
            0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585, 0x3feea09e667f3bcd,                 \
            0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13, 0x3feeace5422aa0db,                 \
            0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,                 \
            0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487,                 \
            0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,                                     \
    }

namespace ggml::expf_steps {

constexpr uint64_t kInvLn2N = 0x40471547652b82fe;  // 32 / ln 2
constexpr uint64_t kShift = 0x4338000000000000;    // 0x1.8p52: adding it rounds to an integer
constexpr uint64_t kC0 = 0x3ebc6af84b912394, kC1 = 0x3f2ebfce50fac4f3, kC2 = 0x3f962e42ff0c52d6;
// Arguments whose top 12 bits (sign cleared) reach this (|x| >= 88, inf, nan) take the special path.
constexpr uint32_t kSpecialTop = 0x42b;
constexpr uint32_t kOverflowBits = 0x42b17217;   // 0x1.62e42ep6f: above it e^x overflows
constexpr uint32_t kUnderflowBits = 0xc2cff1b4;  // -0x1.9fe368p6f: below it e^x is 0

}  // namespace ggml::expf_steps
