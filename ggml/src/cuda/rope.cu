// Rotary position embedding, normal (adjacent pairs) and neox (pairs half a rotation apart) modes, with
// frequency factors, YaRN and the attention factor (rope_ext), in the CPU's steps (cpu/ops_rows.cpp):
// the angle of rope.h (theta = pos * theta_scale^i by repeated float multiplication, the frequency
// divisor, freq_scale, YaRN's ramp), cos/sin correctly rounded (hd.h; within an ulp of glibc's) times the
// magnitude scale, each output formed with one fused multiply-add.
#include <cmath>

#include "common.cuh"
#include "error.h"
#include "ops.h"
#include "rope.h"

namespace ggml::cuda {

namespace {

struct RopeArgs {
    const char* a;
    const int32_t* pos;
    const float* ff;  // frequency divisors (F32 [n_dims / 2]) or null
    char* d;
    int64_t ne[4];
    size_t anb[4], dnb[4];
    int n_dims;
    bool neox;
    RopeFreqs f;
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
        float c, s;
        rope_cos_sin(rope_angle(p.pos[i2], pair, p.f, p.ff), p.f.mscale, &c, &s);
        rope_rotate(at(k0), at(k1), c, s, &y[k0], &y[k1]);
    }
}

// The per-op constants with the very calls the CPU backend makes, so both start from the same bits.
RopeFreqs rope_freqs(const Tensor* t) {
    const int n_dims = t->param<int32_t>(0);
    const float freq_base = t->param<float>(2), freq_scale = t->param<float>(3);
    const float ext_factor = t->param<float>(4), attn_factor = t->param<float>(5);
    float corr[2] = {0.0f, 0.0f};
    if (ext_factor != 0.0f)
        rope_yarn_corr_dims(n_dims, t->param<int32_t>(8), freq_base, t->param<float>(6), t->param<float>(7),
                            corr);
    RopeFreqs f{};
    f.theta_scale = std::pow(freq_base, -2.0f / (float)n_dims);
    f.freq_scale = freq_scale;
    f.ext_factor = ext_factor;
    f.corr0 = corr[0];
    f.corr1 = corr[1];
    f.mscale = ext_factor != 0.0f ? attn_factor * (1.0f + 0.1f * std::log(1.0f / freq_scale)) : attn_factor;
    return f;
}

}  // namespace

void run_rope(ExecContext& ctx, Tensor* t) {
    const Tensor* a = t->src[0];
    RopeArgs p{};
    p.a = (const char*)a->data;
    p.pos = (const int32_t*)t->src[1]->data;
    p.ff = t->src[2] ? (const float*)t->src[2]->data : nullptr;
    p.d = (char*)t->data;
    for (int i = 0; i < 4; ++i) {
        p.ne[i] = t->ne[i];
        p.anb[i] = a->nb[i];
        p.dnb[i] = t->nb[i];
    }
    p.n_dims = t->param<int32_t>(0);
    p.neox = t->param<int32_t>(1) == kRopeNeox;
    p.f = rope_freqs(t);
    const int64_t n = t->nelements();
    if (n == 0) return;
    rope_kernel<<<grid_1d(n), kBlock, 0, ctx.stream>>>(p, n);
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
