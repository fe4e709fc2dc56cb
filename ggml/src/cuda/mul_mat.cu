// mul_mat: activations quantized to the weight type's paired type exactly as the CPU does (once per
// batch, into scratch), then the mat-vec kernels; or, for prompt batches with cublas_prefill, cuBLAS.
#include "common.cuh"
#include "error.h"
#include "ops.h"
#include "quantize.h"

namespace ggml::cuda {

namespace {

struct ActArgs {
    const char* b;
    size_t nb1, nb2, nb3;
    int64_t N, ne2, blocks_per_row, block;
    Type type;
    char* out;
    size_t row_bytes;
};

// One thread per activation block (per value for F16/BF16).
__global__ void quantize_activations_kernel(ActArgs p, int64_t n) {
    CUDA_FOR(idx, n) {
        const int64_t ib = idx % p.blocks_per_row, r = idx / p.blocks_per_row;
        const int64_t i1 = r % p.N, i2 = (r / p.N) % p.ne2, i3 = r / (p.N * p.ne2);
        const float* x = (const float*)(p.b + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3) + ib * p.block;
        quantize_block(p.type, x, p.out + r * p.row_bytes, ib);
    }
}

bool uses_cublas(const Tensor* t, bool cublas_prefill) {
    return cublas_prefill && t->src[1]->ne[1] > kMaxVecColumns;
}

size_t activation_bytes(const Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    const Type vdt = type_traits(a->type).vec_dot_type;
    return b->type == vdt ? 0 : row_size(vdt, b->ne[0]) * (size_t)b->nrows();
}

}  // namespace

size_t mul_mat_scratch(const Tensor* t, bool cublas_prefill) {
    return uses_cublas(t, cublas_prefill) ? mul_mat_cublas_scratch(t) : activation_bytes(t);
}

void run_mul_mat(ExecContext& ctx, Tensor* t) {
    if (uses_cublas(t, ctx.cublas != nullptr)) return run_mul_mat_cublas(ctx, t);
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    const Type vdt = type_traits(a->type).vec_dot_type;
    const int64_t K = a->ne[0], N = b->ne[1];
    MatVecArgs p{(const char*)a->data,
                 a->nb[1],
                 a->nb[2],
                 a->nb[3],
                 (const char*)b->data,
                 b->nb[1],
                 b->nb[2],
                 b->nb[3],
                 (char*)t->data,
                 t->nb[1],
                 t->nb[2],
                 t->nb[3],
                 K,
                 a->ne[1],
                 N,
                 t->ne[2],
                 t->ne[3],
                 b->ne[2] / a->ne[2],
                 b->ne[3] / a->ne[3]};
    if (b->type != vdt) {
        const size_t rs = row_size(vdt, K);
        if (activation_bytes(t) > ctx.scratch_size) throw Error("CUDA mul_mat: scratch too small");
        const int64_t bs = block_size(vdt);
        ActArgs q{(const char*)b->data, b->nb[1], b->nb[2], b->nb[3], N, b->ne[2], K / bs, bs, vdt,
                  ctx.scratch,          rs};
        const int64_t n = b->nrows() * (K / bs);
        if (n > 0) {
            quantize_activations_kernel<<<grid_1d(n), kBlock, 0, ctx.stream>>>(q, n);
            CUDA_CHECK_LAUNCH();
        }
        p.b = ctx.scratch;
        p.b_nb1 = rs;
        p.b_nb2 = rs * (size_t)N;
        p.b_nb3 = p.b_nb2 * (size_t)b->ne[2];
    }
    launch_mul_mat_vec(a->type, p, ctx.stream);
}

}  // namespace ggml::cuda
