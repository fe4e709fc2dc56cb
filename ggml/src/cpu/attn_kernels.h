// Row helpers of the attention ops (mul_mat_t, flash_attn), chosen at run time like kernels.h. Each
// gives the same bits at every instruction-set level: the f16 rounding is IEEE round-to-nearest-even,
// and axpy_f64's products are exact in double, so fused or not, any lane order gives the same sums.
#pragma once

#include <cstdint>

namespace ggml::cpu {

// x[i] = fp16_to_fp32(fp32_to_fp16(x[i])).
void round_f16_row(float* x, int64_t n);
// y[i] += (double)a * (double)x[i].
void axpy_f64(int64_t n, float a, const float* x, double* y);
// y[i] = (float)x[i].
void f64_to_f32_row(const double* x, float* y, int64_t n);
// y[i] = exp(x[i] - m), or 0 where x[i] is -inf; returns the sum of the y[i] in double, in index order.
double exp_row(const float* x, float m, float* y, int64_t n);

}  // namespace ggml::cpu
