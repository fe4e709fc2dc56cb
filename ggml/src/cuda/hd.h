// Functions compiled for both the device and the host. The per-type arithmetic of the kernels (half
// conversions, dequantization, quantizers, block dot products) is written once, runs in the kernels, and
// is checked on the host against the CPU references bit for bit (tests/unit/cuda/test_cuda_numerics.cpp),
// so it is verified on every CI run, with or without a GPU.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

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

// e^x, cos and sin in double, rounded once: correctly rounded but for the rarest near-ties. glibc's float
// versions are not always (expf differs from this by one ulp in about 6 of 10^4 inputs), so the ops that
// use these agree with the CPU to an ulp, not to the bit. CUDA's own float versions may be 2 ulps off.
GGML_HD float exp_f32(float x) {
    return (float)exp((double)x);
}
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
