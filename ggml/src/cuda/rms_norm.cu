// rms_norm: y = x / sqrt(mean(x^2) + eps) per row, one block per row. The squares are summed in double
// (fixed grouping), as the CPU sums them in double, so the float scale almost always has the same bits.
#include "common.cuh"
#include "error.h"
#include "ops.h"
#include "rows.cuh"

namespace ggml::cuda {

namespace {

__global__ void rms_norm_kernel(RowArgs p, float eps) {
    __shared__ double partial[kBlock / kWarp];
    for (int64_t r = blockIdx.x; r < p.nrows; r += gridDim.x) {
        const char* x = p.src_row(r);
        float* y = (float*)p.dst_row(r);
        double sum = 0.0;
        for (int64_t i = threadIdx.x; i < p.ne0; i += blockDim.x) {
            const float v = p.src_at(x, i);
            sum += (double)(v * v);
        }
        sum = block_sum_double(sum, partial);
        const float mean = (float)(sum / (double)p.ne0);
        const float sc = 1.0f / sqrtf(mean + eps);
        for (int64_t i = threadIdx.x; i < p.ne0; i += blockDim.x)
            y[i] = p.src_at(x, i) * sc;
        __syncthreads();  // `partial` is reused by the next row
    }
}

}  // namespace

void run_rms_norm(ExecContext& ctx, Tensor* t) {
    const RowArgs p = RowArgs::of(t);
    if (p.nrows == 0) return;
    const unsigned grid = (unsigned)(p.nrows < (1 << 20) ? p.nrows : (1 << 20));
    rms_norm_kernel<<<grid, kBlock, 0, ctx.stream>>>(p, t->param<float>(0));
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
