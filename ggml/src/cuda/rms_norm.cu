// rms_norm: y = x / sqrt(mean(x^2) + eps) per row, one block per row. The squares are summed in double
// (fixed grouping), as the CPU sums them in double, so the float scale almost always has the same bits.
#include "common.cuh"
#include "error.h"
#include "ops.h"

namespace ggml::cuda {

namespace {

struct RowArgs {
    const char* a;
    char* d;
    int64_t ne0, ne1, ne2, nrows;
    size_t anb[4], dnb[4];
};

__global__ void rms_norm_kernel(RowArgs p, float eps) {
    __shared__ double partial[kBlock / kWarp];
    for (int64_t r = blockIdx.x; r < p.nrows; r += gridDim.x) {
        const int64_t i1 = r % p.ne1, i2 = (r / p.ne1) % p.ne2, i3 = r / (p.ne1 * p.ne2);
        const char* x = p.a + i1 * p.anb[1] + i2 * p.anb[2] + i3 * p.anb[3];
        float* y = (float*)(p.d + i1 * p.dnb[1] + i2 * p.dnb[2] + i3 * p.dnb[3]);
        double sum = 0.0;
        for (int64_t i = threadIdx.x; i < p.ne0; i += blockDim.x) {
            const float v = *(const float*)(x + i * p.anb[0]);
            sum += (double)(v * v);
        }
        sum = block_sum_double(sum, partial);
        const float mean = (float)(sum / (double)p.ne0);
        const float sc = 1.0f / sqrtf(mean + eps);
        for (int64_t i = threadIdx.x; i < p.ne0; i += blockDim.x)
            y[i] = *(const float*)(x + i * p.anb[0]) * sc;
        __syncthreads();  // `partial` is reused by the next row
    }
}

}  // namespace

void run_rms_norm(ExecContext& ctx, Tensor* t) {
    const Tensor* a = t->src[0];
    RowArgs p{(const char*)a->data, (char*)t->data, t->ne[0], t->ne[1], t->ne[2], t->nrows(), {}, {}};
    for (int i = 0; i < 4; ++i) {
        p.anb[i] = a->nb[i];
        p.dnb[i] = t->nb[i];
    }
    if (p.nrows == 0) return;
    const unsigned grid = (unsigned)(p.nrows < (1 << 20) ? p.nrows : (1 << 20));
    rms_norm_kernel<<<grid, kBlock, 0, ctx.stream>>>(p, t->param<float>(0));
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
