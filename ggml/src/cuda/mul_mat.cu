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

// Q8_0 and Q8_1 (the activations of the 4/5/8-bit weight types), a warp per block: a decode step has a few
// dozen blocks per row, and a thread per block left the GPU idle behind 32 loads in a row (about 10 us
// per row of 2048, a third of a decode step's kernel time). Lane j holds x[j]; the maximum and the integer
// sum are exact in any order, the rest is quantize_q8_0/q8_1's arithmetic per value: the same bytes.
template <bool kQ81>
__global__ void quantize_q8_warp_kernel(ActArgs p, int64_t n_blocks) {
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = (int64_t)gridDim.x * blockDim.x / kWarp;
    for (int64_t idx = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / kWarp; idx < n_blocks;
         idx += warps) {
        const int64_t ib = idx % p.blocks_per_row, r = idx / p.blocks_per_row;
        const int64_t i1 = r % p.N, i2 = (r / p.N) % p.ne2, i3 = r / (p.N * p.ne2);
        const float v = ((const float*)(p.b + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3))[ib * p.block + lane];
        float amax = fmaxf(0.0f, fabsf(v));
        for (int off = kWarp / 2; off > 0; off >>= 1)
            amax = fmaxf(amax, __shfl_xor_sync(kFullMask, amax, off));
        const float d = amax / 127;
        const float id = d ? 1.0f / d : 0.0f;
        const int8_t q = q8_level(v * id);
        if constexpr (kQ81) {
            BlockQ8_1& y = ((BlockQ8_1*)(p.out + r * p.row_bytes))[ib];
            y.qs[lane] = q;
            int sum = q;
            for (int off = kWarp / 2; off > 0; off >>= 1) sum += __shfl_xor_sync(kFullMask, sum, off);
            if (lane == 0) {
                y.d = f2h(d);
                y.s = f2h(float(sum) * d);
            }
        } else {
            BlockQ8_0& y = ((BlockQ8_0*)(p.out + r * p.row_bytes))[ib];
            y.qs[lane] = q;
            if (lane == 0) y.d = f2h(d);
        }
    }
}

void quantize_activations(const ActArgs& q, int64_t n, cudaStream_t stream) {
    static_assert(QK8_0 == kWarp && QK8_1 == kWarp);
    if (q.type == Type::Q8_0)
        quantize_q8_warp_kernel<false><<<grid_1d(n * kWarp), kBlock, 0, stream>>>(q, n);
    else if (q.type == Type::Q8_1)
        quantize_q8_warp_kernel<true><<<grid_1d(n * kWarp), kBlock, 0, stream>>>(q, n);
    else
        quantize_activations_kernel<<<grid_1d(n), kBlock, 0, stream>>>(q, n);
    CUDA_CHECK_LAUNCH();
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

void quantize_activation_rows(const Tensor* b, Type vdt, char* out, cudaStream_t stream) {
    const int64_t K = b->ne[0], bs = block_size(vdt);
    const ActArgs q{
        (const char*)b->data, b->nb[1], b->nb[2], b->nb[3], b->ne[1], b->ne[2], K / bs, bs, vdt, out,
        row_size(vdt, K)};
    const int64_t n = b->nrows() * (K / bs);
    if (n > 0) quantize_activations(q, n, stream);
}

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
        quantize_activation_rows(b, vdt, ctx.scratch, ctx.stream);
        p.b = ctx.scratch;
        p.b_nb1 = rs;
        p.b_nb2 = rs * (size_t)N;
        p.b_nb3 = p.b_nb2 * (size_t)b->ne[2];
    }
    launch_mul_mat_vec(a->type, p, ctx.stream);
}

}  // namespace ggml::cuda
