// norm (LayerNorm's normalization, BERT): y = (x - mean) / sqrt(variance + eps) per row, one warp per row.
// The mean and the variance are sequential double sums, as the CPU's op_norm adds them (cpu/ops_rows.cpp):
// warp_sequential_sum adds in that very order, and the float steps are norm.h's, so the same bits.
#include "common.cuh"
#include "error.h"
#include "norm.h"
#include "ops.h"
#include "rows.cuh"

namespace ggml::cuda {

namespace {

constexpr int kRowsPerBlock = 4;  // warps per block, one row each

__global__ void norm_kernel(RowArgs p, float eps) {
    const int64_t r = (int64_t)blockIdx.x * kRowsPerBlock + threadIdx.y;
    if (r >= p.nrows) return;  // the whole warp leaves together
    const char* x = p.src_row(r);
    float* y = (float*)p.dst_row(r);
    auto at = [&](int64_t i) { return p.src_at(x, i); };
    const float mean = norm_mean(warp_sequential_sum(p.ne0, [&](int64_t i) { return (double)at(i); }), p.ne0);
    const double sum2 =
        warp_sequential_sum(p.ne0, [&](int64_t i) { return norm_square(norm_centre(at(i), mean)); });
    const float sc = norm_scale(sum2, p.ne0, eps);
    for (int64_t i = threadIdx.x; i < p.ne0; i += kWarp) y[i] = norm_centre(at(i), mean) * sc;
}

}  // namespace

void run_norm(ExecContext& ctx, Tensor* t) {
    const RowArgs p = RowArgs::of(t);
    if (p.nrows == 0 || p.ne0 == 0) return;
    const unsigned grid = (unsigned)((p.nrows + kRowsPerBlock - 1) / kRowsPerBlock);
    norm_kernel<<<grid, dim3(kWarp, kRowsPerBlock), 0, ctx.stream>>>(p, t->param<float>(0));
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
