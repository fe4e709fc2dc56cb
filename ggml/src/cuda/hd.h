// Functions compiled for both the device and the host. The per-type arithmetic of the kernels (half
// conversions, dequantization, quantizers, block dot products) is written once, runs in the kernels, and
// is checked on the host against the CPU references bit for bit (tests/unit/cuda/test_cuda_numerics.cpp),
// so it is verified on every CI run, with or without a GPU.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "../expf_steps.h"

#ifdef __CUDACC__
#define GGML_HD __host__ __device__ __forceinline__
#else
#define GGML_HD inline
#endif

namespace ggml::cuda {

GGML_HD float as_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

GGML_HD uint32_t as_uint(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

// Round to nearest, ties to even (ggml's nearest_int, for the magnitudes quantizers produce).
GGML_HD int round_even(float v) {
#ifdef __CUDA_ARCH__
    return __float2int_rn(v);
#else
    return (int)std::nearbyint(v);  // the default rounding mode: to nearest even
#endif
}

// The 16 levels of IQ4_NL (kIq4nlValues): constant memory on the device.
#ifdef __CUDACC__
static __constant__ int8_t kIq4nlLevelsDevice[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                     1,    13,   25,  38,  53,  69,  89,  113};
#endif
GGML_HD int iq4nl_level(int i) {
#ifdef __CUDA_ARCH__
    return kIq4nlLevelsDevice[i];
#else
    constexpr int8_t levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    return levels[i];
#endif
}

GGML_HD double as_double(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

GGML_HD uint64_t as_uint64(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

#ifdef __CUDACC__
static __constant__ uint64_t kExpfTableDevice[32] = GGML_EXPF_TABLE;
#endif
GGML_HD uint64_t expf_table(uint64_t i) {
#ifdef __CUDA_ARCH__
    return kExpfTableDevice[i];
#else
    constexpr uint64_t table[32] = GGML_EXPF_TABLE;
    return table[i];
#endif
}

// e^x with the steps of glibc's expf (expf_steps.h), each fused multiply-add written out (the library is
// built with --fmad=false, so nothing else is fused): the same bits as the CPU's std::exp, so softmax,
// flash attention and SiLU match the CPU exactly (a one-ulp difference in a softmax weight can flip its
// rounding to f16, a relative change of 2^-11).
GGML_HD float exp_f32(float x) {
    namespace e = expf_steps;
    const uint32_t ux = as_uint(x);
    if (((ux >> 20) & 0x7ff) >= e::kSpecialTop) {
        if (ux == 0xff800000u) return 0.0f;               // -inf
        if (((ux >> 20) & 0x7ff) >= 0x7f8) return x + x;  // inf, nan
        if (x > as_float(e::kOverflowBits)) return INFINITY;
        if (x < as_float(e::kUnderflowBits)) return 0.0f;
        // Otherwise the main steps below, which round to a subnormal or to the largest floats.
    }
    const double xd = (double)x;
    const double inv_ln2n = as_double(e::kInvLn2N), shift = as_double(e::kShift);
    const double z = fma(inv_ln2n, xd, shift);
    const uint64_t ki = as_uint64(z);
    const double kd = z - shift;
    const double r = fma(inv_ln2n, xd, -kd);
    const double s = as_double(expf_table(ki & 31) + (ki << 47));
    const double zz = fma(as_double(e::kC0), r, as_double(e::kC1));
    const double r2 = r * r;
    double y = fma(r, as_double(e::kC2), 1.0);
    y = fma(zz, r2, y);
    return (float)(y * s);
}

// cos and sin in double, rounded once: correctly rounded but for the rarest near-ties. glibc's cosf and
// sinf are not always (within 0.56 ulp), so RoPE agrees with the CPU to an ulp, not always to the bit.
GGML_HD float cos_f32(float x) {
    return (float)cos((double)x);
}
GGML_HD float sin_f32(float x) {
    return (float)sin((double)x);
}

// silu as the CPU computes it: x / (1 + e^-x), IEEE division.
GGML_HD float silu_f32(float x) {
    return x / (1.0f + exp_f32(-x));
}

}  // namespace ggml::cuda
