// Element-wise ops on F32: add, mul and div (b broadcast over a), swiglu (and gpt-oss's clamped one), scale,
// silu, tanh, gelu, gelu_erf. Same operations as the CPU (ggml/src/cpu/ops_elementwise.cpp), so the same
// bits: tanh takes glibc's tanhf steps and gelu computes the f16 table entry the CPU looks up (tanh.h);
// gelu_erf, in double and rounded once, is within an ulp (erfc's last double bits may differ from glibc's).
#include "common.cuh"
#include "error.h"
#include "ops.h"
#include "tanh.h"

namespace ggml::cuda {

namespace {

// Shapes and byte strides of an output and up to two operands (b may be broadcast: its index is taken
// modulo its shape).
struct EwArgs {
    const char* a;
    const char* b;
    char* d;
    int64_t ne[4], bne[4];
    size_t anb[4], bnb[4], dnb[4];
    float s;
};

EwArgs make_args(Tensor* t) {
    EwArgs p{};
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    p.a = (const char*)a->data;
    p.b = b ? (const char*)b->data : nullptr;
    p.d = (char*)t->data;
    for (int i = 0; i < 4; ++i) {
        p.ne[i] = t->ne[i];
        p.anb[i] = a->nb[i];
        p.dnb[i] = t->nb[i];
        p.bne[i] = b ? b->ne[i] : 1;
        p.bnb[i] = b ? b->nb[i] : 0;
    }
    return p;
}

struct Add {
    __device__ float operator()(float x, float y, float) const { return x + y; }
};
struct Mul {
    __device__ float operator()(float x, float y, float) const { return x * y; }
};
struct Div {
    __device__ float operator()(float x, float y, float) const { return x / y; }
};
struct SwiGlu {
    __device__ float operator()(float x, float y, float) const { return silu_f32(x) * y; }
};
struct SwiGluOai {
    float alpha, limit;
    __device__ float operator()(float a, float b, float) const {
        const float x = fminf(a, limit);
        const float y = fminf(fmaxf(b, -limit), limit);
        return x / (1.0f + exp_f32(alpha * (-x))) * (y + 1.0f);
    }
};
struct Scale {
    __device__ float operator()(float x, float, float s) const { return x * s; }
};
struct Silu {
    __device__ float operator()(float x, float, float) const { return silu_f32(x); }
};
struct Tanh {
    __device__ float operator()(float x, float, float) const { return tanh_f32(x); }
};
struct Gelu {
    __device__ float operator()(float x, float, float) const { return gelu_f32(x); }
};
// The CPU's expression: 1 + erf(z) as erfc(-z), in double (CUDA's erfc is within a few ulp of a double),
// rounded once to float.
struct GeluErf {
    __device__ float operator()(float x, float, float) const {
        const double xd = x;
        return (float)(0.5 * xd * erfc(-xd * 0.70710678118654752440));
    }
};

template <class F>
__global__ void elementwise_kernel(EwArgs p, int64_t n, F f) {
    CUDA_FOR(i, n) {
        const int64_t i0 = i % p.ne[0], r = i / p.ne[0];
        const int64_t i1 = r % p.ne[1], i2 = (r / p.ne[1]) % p.ne[2], i3 = r / (p.ne[1] * p.ne[2]);
        const float x = *(const float*)(p.a + i0 * p.anb[0] + i1 * p.anb[1] + i2 * p.anb[2] + i3 * p.anb[3]);
        float y = 0.0f;
        if (p.b)
            y = *(const float*)(p.b + (i0 % p.bne[0]) * p.bnb[0] + (i1 % p.bne[1]) * p.bnb[1] +
                                (i2 % p.bne[2]) * p.bnb[2] + (i3 % p.bne[3]) * p.bnb[3]);
        *(float*)(p.d + i0 * p.dnb[0] + i1 * p.dnb[1] + i2 * p.dnb[2] + i3 * p.dnb[3]) = f(x, y, p.s);
    }
}

template <class F>
void launch(ExecContext& ctx, Tensor* t, float s = 0.0f, F f = F{}) {
    EwArgs p = make_args(t);
    p.s = s;
    const int64_t n = t->nelements();
    if (n == 0) return;
    elementwise_kernel<<<grid_1d(n), kBlock, 0, ctx.stream>>>(p, n, f);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

void run_add(ExecContext& ctx, Tensor* t) {
    launch<Add>(ctx, t);
}
void run_mul(ExecContext& ctx, Tensor* t) {
    launch<Mul>(ctx, t);
}
void run_swiglu(ExecContext& ctx, Tensor* t) {
    launch<SwiGlu>(ctx, t);
}
void run_swiglu_oai(ExecContext& ctx, Tensor* t) {
    launch<SwiGluOai>(ctx, t, 0.0f, SwiGluOai{t->param<float>(0), t->param<float>(1)});
}
void run_scale(ExecContext& ctx, Tensor* t) {
    launch<Scale>(ctx, t, t->param<float>(0));
}
void run_silu(ExecContext& ctx, Tensor* t) {
    launch<Silu>(ctx, t);
}
void run_div(ExecContext& ctx, Tensor* t) {
    launch<Div>(ctx, t);
}
void run_tanh(ExecContext& ctx, Tensor* t) {
    launch<Tanh>(ctx, t);
}
void run_gelu(ExecContext& ctx, Tensor* t) {
    launch<Gelu>(ctx, t);
}
void run_gelu_erf(ExecContext& ctx, Tensor* t) {
    launch<GeluErf>(ctx, t);
}

}  // namespace ggml::cuda
