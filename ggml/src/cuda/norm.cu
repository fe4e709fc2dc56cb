// norm (LayerNorm's normalization, BERT): y = (x - mean) / sqrt(variance + eps) per row, one warp per row.
// The mean and the variance are sequential double sums, as the CPU's op_norm adds them (cpu/ops_rows.cpp):
// warp_sequential_sum adds in that very order, and the float steps are norm.h's, so the same bits.
#include "common.cuh"
#include "error.h"
#include "norm.h"
#include "ops.h"

namespace ggml::cuda {

namespace {

constexpr int kRowsPerBlock = 4;  // warps per block, one row each

struct NormArgs {
    const char* a;
    char* d;
    int64_t ne0, ne1, ne2, nrows;
    size_t anb[4], dnb[4];
    float eps;
};

__global__ void norm_kernel(NormArgs p) {
    const int64_t r = (int64_t)blockIdx.x * kRowsPerBlock + threadIdx.y;
    if (r >= p.nrows) return;  // the whole warp leaves together
    const int64_t i1 = r % p.ne1, i2 = (r / p.ne1) % p.ne2, i3 = r / (p.ne1 * p.ne2);
    const char* x = p.a + i1 * p.anb[1] + i2 * p.anb[2] + i3 * p.anb[3];
    float* y = (float*)(p.d + i1 * p.dnb[1] + i2 * p.dnb[2] + i3 * p.dnb[3]);
    auto at = [&](int64_t i) { return *(const float*)(x + i * p.anb[0]); };
    const float mean = norm_mean(warp_sequential_sum(p.ne0, [&](int64_t i) { return (double)at(i); }), p.ne0);
    const double sum2 =
        warp_sequential_sum(p.ne0, [&](int64_t i) { return norm_square(norm_centre(at(i), mean)); });
    const float sc = norm_scale(sum2, p.ne0, p.eps);
    for (int64_t i = threadIdx.x; i < p.ne0; i += kWarp) y[i] = norm_centre(at(i), mean) * sc;
}

}  // namespace

void run_norm(ExecContext& ctx, Tensor* t) {
    const Tensor* a = t->src[0];
    NormArgs p{(const char*)a->data, (char*)t->data, t->ne[0], t->ne[1], t->ne[2], t->nrows(), {}, {},
               t->param<float>(0)};
    for (int i = 0; i < 4; ++i) {
        p.anb[i] = a->nb[i];
        p.dnb[i] = t->nb[i];
    }
    if (p.nrows == 0 || p.ne0 == 0) return;
    const unsigned grid = (unsigned)((p.nrows + kRowsPerBlock - 1) / kRowsPerBlock);
    norm_kernel<<<grid, dim3(kWarp, kRowsPerBlock), 0, ctx.stream>>>(p);
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
