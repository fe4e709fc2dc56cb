// Row helpers of the attention ops (mul_mat_t, flash_attn), chosen at run time like kernels.h. Each
// gives the same bits at every instruction-set level: the f16 rounding is IEEE round-to-nearest-even,
// and axpy_f64's products are exact in double, so fused or not, any lane order gives the same sums.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ggml/types.h"

namespace ggml::cpu {

// x[i] = fp16_to_fp32(fp32_to_fp16(x[i])).
void round_f16_row(float* x, int64_t n);
// y[i] += (double)a * (double)x[i].
void axpy_f64(int64_t n, float a, const float* x, double* y);
// y[i] = (float)x[i].
void f64_to_f32_row(const double* x, float* y, int64_t n);

// The rest is in kernels_rows.cpp; each equals its scalar form (shown) bit for bit at every level.

// y[i] = exp(x[i] - m) (std::exp), or 0 where x[i] is -inf; returns sum0 plus the y[i] in double, added in
// index order (so a row's segments chained through sum0 give the whole row's sum).
double exp_row(const float* x, float m, float* y, int64_t n, double sum0 = 0.0);
// exp_row's y without its sum (the same bits).
void exp_row_values(const float* x, float m, float* y, int64_t n);
// sums[r] += y[r * stride + j] for j < n, in index order, for each row r < nr (nr <= 8): the sums exp_row
// would return, of several rows at once.
void sum_rows_f64(const float* y, size_t stride, int nr, int64_t n, double* sums);
// y[i] = x[i] * scale + (mask ? mask[i] : 0) (rounded after the product); returns the largest y[i] that
// is not nan (-inf if none; the sign of a zero maximum is unspecified, which exp_row does not see).
float scale_mask_max_row(const float* x, float scale, const float* mask, float* y, int64_t n);
// Rows i < n of a list of blocks: block b covers [b * block, min((b + 1) * block, n)); blocks ascending.
struct RowBlocks {
    const int32_t* index = nullptr;
    int64_t count = 0;
    int64_t block = 0;
};
// out[j] = (float) sum over i in order, skipping w[i] == 0, of (double)w[i] * v[i * v_stride + j], for
// j < d; acc holds d doubles of scratch. With blocks, only the rows i they list are read (the others count
// as zero weights).
void weighted_sum_f64(int64_t n, const float* w, const float* v, size_t v_stride, int64_t d, double* acc,
                      float* out, const RowBlocks* blocks = nullptr);
// The same with f16 values (v_stride in values), each converted exactly as it is read: no f32 copy of the
// values is needed (decode reads each value once).
void weighted_sum_f64(int64_t n, const float* w, const uint16_t* v, size_t v_stride, int64_t d, double* acc,
                      float* out, const RowBlocks* blocks = nullptr);
// For each query q < nq (<= 16): acc[q * acc_stride + j] += the sum over the rows i < n that the query
// sees (bit q of seen[i]), in order, of w[q * w_stride + i] * v[i * d + j], for j < d: the steps of
// weighted_sum_f64 over weights and values already in double (each weight a float, rounded to f16 where
// the values are; a float weight of zero is a row not seen), shared by several queries (kernels_wsum.cpp).
// Chained over consecutive pieces of rows it gives weighted_sum_f64's sums.
void weighted_sum_f64_add(int64_t n, const double* w, size_t w_stride, const uint16_t* seen, int nq,
                          const double* v, int64_t d, double* acc, size_t acc_stride);
// wd[i] = (double)w[i], and bit q of seen[i] set where w[i] != 0 (weighted_sum_f64_add's inputs).
void weights_to_f64(const float* w, int64_t n, int q, double* wd, uint16_t* seen);
// y[i] = (double)x[i], f16 converted exactly.
void to_f64_row(const uint16_t* x, double* y, int64_t n);
void to_f64_row(const float* x, double* y, int64_t n);
// A row of n values of any type with a to_float as doubles: f16 and f32 directly, the others through
// their floats (n floats of scratch in tmp).
void value_row_to_f64(Type type, const void* row, double* y, int64_t n, float* tmp);
// y[i] = x[i] / (1 + std::exp(-x[i])) (SiLU), and that times g[i] (SwiGLU).
void silu_row(const float* x, float* y, int64_t n);
void swiglu_row(const float* x, const float* g, float* y, int64_t n);

}  // namespace ggml::cpu
