// The float steps of norm (LayerNorm's normalization) and sum_rows after their sums, for host and device
// (hd.h), as cpu/ops_rows.cpp and cpu/ops_moe.cpp take them. The sums themselves are sequential double
// sums on the CPU; the kernels add in the same order (warp_sequential_sum, common.cuh), so they are the
// same bits, and so is everything here: IEEE division and square root round the same on both.
#pragma once

#include "hd.h"

namespace ggml::cuda {

GGML_HD float sqrt_f32(float x) {
#ifdef __CUDA_ARCH__
    return sqrtf(x);  // correctly rounded (nvcc's default -prec-sqrt=true)
#else
    return std::sqrt(x);
#endif
}

// The mean of a row from its sequential double sum.
GGML_HD float norm_mean(double sum, int64_t n) {
    return (float)(sum / (double)n);
}

// One centred value and its square as the CPU adds it to the variance's sum.
GGML_HD float norm_centre(float x, float mean) {
    return x - mean;
}
GGML_HD double norm_square(float v) {
    return (double)(v * v);
}

// The factor the centred values are multiplied by: 1 / sqrt(variance + eps).
GGML_HD float norm_scale(double sum2, int64_t n, float eps) {
    return 1.0f / sqrt_f32((float)(sum2 / (double)n) + eps);
}

// The whole row in the CPU's order (the host tests' emulation of the kernel; stride in floats).
GGML_HD void norm_row(const float* x, int64_t stride, int64_t n, float eps, float* y) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += (double)x[i * stride];
    const float mean = norm_mean(sum, n);
    double sum2 = 0.0;
    for (int64_t i = 0; i < n; ++i) sum2 += norm_square(norm_centre(x[i * stride], mean));
    const float sc = norm_scale(sum2, n, eps);
    for (int64_t i = 0; i < n; ++i) y[i] = norm_centre(x[i * stride], mean) * sc;
}

}  // namespace ggml::cuda
