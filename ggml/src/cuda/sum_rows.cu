// sum_rows: each row's sum, one warp per row, added in order in double as the CPU's op_sum_rows does
// (cpu/ops_moe.cpp; warp_sequential_sum), then rounded once: the same bits.
#include "common.cuh"
#include "error.h"
#include "ops.h"

namespace ggml::cuda {

namespace {

constexpr int kRowsPerBlock = 4;  // warps per block, one row each

struct SumRowsArgs {
    const char* a;
    char* d;
    int64_t ne0, ne1, ne2, nrows;
    size_t anb[4], dnb[4];
};

__global__ void sum_rows_kernel(SumRowsArgs p) {
    const int64_t r = (int64_t)blockIdx.x * kRowsPerBlock + threadIdx.y;
    if (r >= p.nrows) return;  // the whole warp leaves together
    const int64_t i1 = r % p.ne1, i2 = (r / p.ne1) % p.ne2, i3 = r / (p.ne1 * p.ne2);
    const char* x = p.a + i1 * p.anb[1] + i2 * p.anb[2] + i3 * p.anb[3];
    const double sum =
        warp_sequential_sum(p.ne0, [&](int64_t i) { return (double)*(const float*)(x + i * p.anb[0]); });
    if (threadIdx.x == 0) *(float*)(p.d + i1 * p.dnb[1] + i2 * p.dnb[2] + i3 * p.dnb[3]) = (float)sum;
}

}  // namespace

void run_sum_rows(ExecContext& ctx, Tensor* t) {
    const Tensor* a = t->src[0];
    SumRowsArgs p{(const char*)a->data, (char*)t->data, a->ne[0], t->ne[1], t->ne[2], t->nrows(), {}, {}};
    for (int i = 0; i < 4; ++i) {
        p.anb[i] = a->nb[i];
        p.dnb[i] = t->nb[i];
    }
    if (p.nrows == 0) return;
    const unsigned grid = (unsigned)((p.nrows + kRowsPerBlock - 1) / kRowsPerBlock);
    sum_rows_kernel<<<grid, dim3(kWarp, kRowsPerBlock), 0, ctx.stream>>>(p);
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
