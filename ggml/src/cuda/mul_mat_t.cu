// mul_mat_t (attention values): out[d, q, h] = sum_i a[d, i, h] * b[i, q, h], one thread per output,
// with the CPU's steps: weights rounded to f16 for an F16 a, zero weights (masked cells) skipped, exact
// products summed in double in cell order, rounded to float once. The same bits as the CPU.
#include "common.cuh"
#include "dequantize.h"
#include "error.h"
#include "ops.h"

namespace ggml::cuda {

namespace {

struct MulMatTArgs {
    const char* a;
    Type atype;
    size_t anb1, anb2, anb3;
    const char* b;
    size_t bnb0, bnb1, bnb2, bnb3;
    char* d;
    size_t dnb1, dnb2, dnb3;
    int64_t D, I, Q, hb, r2, r3;
};

__global__ void mul_mat_t_kernel(MulMatTArgs p, int64_t n) {
    CUDA_FOR(idx, n) {
        const int64_t d = idx % p.D, r = idx / p.D;
        const int64_t q = r % p.Q, h = (r / p.Q) % p.hb, h3 = r / (p.Q * p.hb);
        const char* w = p.b + q * p.bnb1 + h * p.bnb2 + h3 * p.bnb3;
        const char* plane = p.a + (h / p.r2) * p.anb2 + (h3 / p.r3) * p.anb3;
        double acc = 0.0;
        for (int64_t i = 0; i < p.I; ++i) {
            float wi = *(const float*)(w + i * p.bnb0);
            if (p.atype == Type::F16) wi = h2f(f2h(wi));
            if (wi == 0.0f) continue;
            acc += (double)wi * (double)dequantize(p.atype, plane + i * p.anb1, d);
        }
        *(float*)(p.d + d * sizeof(float) + q * p.dnb1 + h * p.dnb2 + h3 * p.dnb3) = (float)acc;
    }
}

}  // namespace

void run_mul_mat_t(ExecContext& ctx, Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    MulMatTArgs p{(const char*)a->data,
                  a->type,
                  a->nb[1],
                  a->nb[2],
                  a->nb[3],
                  (const char*)b->data,
                  b->nb[0],
                  b->nb[1],
                  b->nb[2],
                  b->nb[3],
                  (char*)t->data,
                  t->nb[1],
                  t->nb[2],
                  t->nb[3],
                  a->ne[0],
                  a->ne[1],
                  b->ne[1],
                  b->ne[2],
                  b->ne[2] / a->ne[2],
                  b->ne[3] / a->ne[3]};
    const int64_t n = t->nelements();
    if (n == 0) return;
    mul_mat_t_kernel<<<grid_1d(n), kBlock, 0, ctx.stream>>>(p, n);
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
