// soft_max(a * scale + mask) per row, one block per row, with the CPU's steps: masked (-inf) entries are
// exactly zero, the maximum is exact, e^x is correctly rounded (hd.h), and the denominator is an exact sum
// (exact_sum.h), so a row does not depend on where its cells sit among other sequences' cells. Attention
// sinks (gpt-oss) join the maximum and, after the row's exact sum, the denominator, as on the CPU.
#include "common.cuh"
#include "error.h"
#include "ops.h"

namespace ggml::cuda {

namespace {

struct SoftMaxArgs {
    const char* a;
    const char* mask;    // nullable
    const float* sinks;  // nullable: one logit per plane (attention sinks)
    char* d;
    bool mask_f16;
    int64_t ne0, ne1, ne2, nrows, mne2, mne3;
    size_t anb[4], mnb[4], dnb[4];
    float scale;
};

__global__ void soft_max_kernel(SoftMaxArgs p) {
    __shared__ float maxes[kBlock / kWarp];
    __shared__ unsigned long long sums[2 * (kBlock / kWarp)];
    const float neg_inf = -INFINITY;
    for (int64_t r = blockIdx.x; r < p.nrows; r += gridDim.x) {
        const int64_t i1 = r % p.ne1, i2 = (r / p.ne1) % p.ne2, i3 = r / (p.ne1 * p.ne2);
        const char* x = p.a + i1 * p.anb[1] + i2 * p.anb[2] + i3 * p.anb[3];
        float* y = (float*)(p.d + i1 * p.dnb[1] + i2 * p.dnb[2] + i3 * p.dnb[3]);
        const char* m =
            p.mask ? p.mask + i1 * p.mnb[1] + (i2 % p.mne2) * p.mnb[2] + (i3 % p.mne3) * p.mnb[3] : nullptr;
        float mx = neg_inf;
        for (int64_t i = threadIdx.x; i < p.ne0; i += blockDim.x) {
            float mv = 0.0f;
            if (m) mv = p.mask_f16 ? h2f(((const uint16_t*)m)[i]) : ((const float*)m)[i];
            const float v = *(const float*)(x + i * p.anb[0]) * p.scale + mv;
            y[i] = v;
            mx = v > mx ? v : mx;
        }
        mx = block_max(mx, maxes);
        if (p.sinks) mx = p.sinks[i2] > mx ? p.sinks[i2] : mx;  // the sink joins the maximum and the sum
        ExactSum s;
        for (int64_t i = threadIdx.x; i < p.ne0; i += blockDim.x) {
            const float e = y[i] == neg_inf ? 0.0f : exp_f32(y[i] - mx);
            y[i] = e;
            s.add(e);
        }
        double sum = block_exact_sum(s, sums);
        if (p.sinks) sum += (double)exp_f32(p.sinks[i2] - mx);
        const float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f;
        for (int64_t i = threadIdx.x; i < p.ne0; i += blockDim.x) y[i] *= inv;
        __syncthreads();  // the shared slots are reused by the next row
    }
}

}  // namespace

void run_soft_max(ExecContext& ctx, Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* mask = t->src[1];
    SoftMaxArgs p{};
    p.a = (const char*)a->data;
    p.mask = mask ? (const char*)mask->data : nullptr;
    p.sinks = t->src[2] ? (const float*)t->src[2]->data : nullptr;
    p.d = (char*)t->data;
    p.mask_f16 = mask && mask->type == Type::F16;
    p.ne0 = t->ne[0];
    p.ne1 = t->ne[1];
    p.ne2 = t->ne[2];
    p.nrows = t->nrows();
    p.mne2 = mask ? mask->ne[2] : 1;
    p.mne3 = mask ? mask->ne[3] : 1;
    for (int i = 0; i < 4; ++i) {
        p.anb[i] = a->nb[i];
        p.mnb[i] = mask ? mask->nb[i] : 0;
        p.dnb[i] = t->nb[i];
    }
    p.scale = t->param<float>(0);
    if (p.nrows == 0) return;
    const unsigned grid = (unsigned)(p.nrows < (1 << 20) ? p.nrows : (1 << 20));
    soft_max_kernel<<<grid, kBlock, 0, ctx.stream>>>(p);
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
