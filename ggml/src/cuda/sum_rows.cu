// sum_rows: each row's sum, one warp per row, added in order in double as the CPU's op_sum_rows does
// (cpu/ops_moe.cpp; warp_sequential_sum), then rounded once: the same bits.
#include "common.cuh"
#include "error.h"
#include "ops.h"
#include "rows.cuh"

namespace ggml::cuda {

namespace {

constexpr int kRowsPerBlock = 4;  // warps per block, one row each

__global__ void sum_rows_kernel(RowArgs p) {
    const int64_t r = (int64_t)blockIdx.x * kRowsPerBlock + threadIdx.y;
    if (r >= p.nrows) return;  // the whole warp leaves together
    const char* x = p.src_row(r);
    const double sum = warp_sequential_sum(p.ne0, [&](int64_t i) { return (double)p.src_at(x, i); });
    if (threadIdx.x == 0) *(float*)p.dst_row(r) = (float)sum;
}

}  // namespace

void run_sum_rows(ExecContext& ctx, Tensor* t) {
    const RowArgs p = RowArgs::of(t);
    if (p.nrows == 0) return;
    const unsigned grid = (unsigned)((p.nrows + kRowsPerBlock - 1) / kRowsPerBlock);
    sum_rows_kernel<<<grid, dim3(kWarp, kRowsPerBlock), 0, ctx.stream>>>(p);
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
