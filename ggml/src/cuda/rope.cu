// Rotary position embedding, normal (adjacent pairs) and neox (pairs half a rotation apart) modes, with
// the CPU's steps: theta = pos * theta_scale^i by repeated float multiplication, cos/sin correctly rounded
// (hd.h; within an ulp of glibc's), each output formed with one fused multiply-add (cpu/ops_rows.cpp).
#include <cmath>

#include "common.cuh"
#include "error.h"
#include "ops.h"

namespace ggml::cuda {

namespace {

struct RopeArgs {
    const char* a;
    const int32_t* pos;
    char* d;
    int64_t ne[4];
    size_t anb[4], dnb[4];
    int n_dims;
    bool neox;
    float theta_scale, freq_scale;
};

__global__ void rope_kernel(RopeArgs p, int64_t n) {
    CUDA_FOR(idx, n) {
        const int64_t j = idx % p.ne[0], r = idx / p.ne[0];
        const int64_t i1 = r % p.ne[1], i2 = (r / p.ne[1]) % p.ne[2], i3 = r / (p.ne[1] * p.ne[2]);
        const char* x = p.a + i1 * p.anb[1] + i2 * p.anb[2] + i3 * p.anb[3];
        float* y = (float*)(p.d + i1 * p.dnb[1] + i2 * p.dnb[2] + i3 * p.dnb[3]);
        auto at = [&](int64_t k) { return *(const float*)(x + k * p.anb[0]); };
        if (j >= p.n_dims) {
            y[j] = at(j);
            continue;
        }
        // This thread writes one pair: (pair, pair + half) in neox mode, (2 pair, 2 pair + 1) otherwise.
        const int half = p.n_dims / 2;
        int pair;
        int64_t k0, k1;
        if (p.neox) {
            if (j >= half) continue;
            pair = (int)j;
            k0 = j;
            k1 = j + half;
        } else {
            if (j % 2) continue;
            pair = (int)(j / 2);
            k0 = j;
            k1 = j + 1;
        }
        float theta = (float)p.pos[i2];
        for (int i = 0; i < pair; ++i) theta *= p.theta_scale;
        const float th = p.freq_scale * theta;
        const float c = cos_f32(th), s = sin_f32(th);
        const float x0 = at(k0), x1 = at(k1);
        y[k0] = fmaf(x0, c, -(x1 * s));
        y[k1] = fmaf(x0, s, x1 * c);
    }
}

}  // namespace

void run_rope(ExecContext& ctx, Tensor* t) {
    const Tensor* a = t->src[0];
    RopeArgs p{};
    p.a = (const char*)a->data;
    p.pos = (const int32_t*)t->src[1]->data;
    p.d = (char*)t->data;
    for (int i = 0; i < 4; ++i) {
        p.ne[i] = t->ne[i];
        p.anb[i] = a->nb[i];
        p.dnb[i] = t->nb[i];
    }
    p.n_dims = t->param<int32_t>(0);
    p.neox = t->param<int32_t>(1) == kRopeNeox;
    // Computed on the host with the very call the CPU backend makes, so both start from the same bits.
    p.theta_scale = std::pow(t->param<float>(2), -2.0f / (float)p.n_dims);
    p.freq_scale = t->param<float>(3);
    const int64_t n = t->nelements();
    if (n == 0) return;
    rope_kernel<<<grid_1d(n), kBlock, 0, ctx.stream>>>(p, n);
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
