// top_k: the indices of each row's k largest values, largest first, ties by lower index (topk.h). One
// block per row: the row goes to shared memory, each thread takes elements and counts the elements that
// go before each (its rank); those of rank below k write their index at their rank. The order is strict
// and total, so the list is the CPU's whatever the schedule. Rows up to kTopKMaxRow values (dispatch.cpp
// refuses longer ones: the CPU's partial sort is the better tool there).
#include "common.cuh"
#include "error.h"
#include "ops.h"
#include "topk.h"

namespace ggml::cuda {

namespace {

constexpr int kThreads = 128;

struct TopKArgs {
    const char* a;
    char* d;
    int64_t ne0, ne1, ne2, nrows, k;
    size_t anb[4], dnb[4];
};

__global__ void top_k_kernel(TopKArgs p) {
    extern __shared__ float row[];
    for (int64_t r = blockIdx.x; r < p.nrows; r += gridDim.x) {
        const int64_t i1 = r % p.ne1, i2 = (r / p.ne1) % p.ne2, i3 = r / (p.ne1 * p.ne2);
        const char* x = p.a + i1 * p.anb[1] + i2 * p.anb[2] + i3 * p.anb[3];
        int32_t* out = (int32_t*)(p.d + i1 * p.dnb[1] + i2 * p.dnb[2] + i3 * p.dnb[3]);
        for (int64_t i = threadIdx.x; i < p.ne0; i += blockDim.x) row[i] = *(const float*)(x + i * p.anb[0]);
        __syncthreads();
        for (int64_t i = threadIdx.x; i < p.ne0; i += blockDim.x) {
            const int64_t rank = topk_rank([&](int64_t j) { return row[j]; }, p.ne0, i);
            if (rank < p.k) out[rank] = (int32_t)i;
        }
        __syncthreads();  // `row` is reused by the next row
    }
}

}  // namespace

void run_top_k(ExecContext& ctx, Tensor* t) {
    const Tensor* a = t->src[0];
    TopKArgs p{(const char*)a->data, (char*)t->data,       a->ne[0], t->ne[1], t->ne[2],
               t->nrows(),           t->param<int32_t>(0), {},       {}};
    for (int i = 0; i < 4; ++i) {
        p.anb[i] = a->nb[i];
        p.dnb[i] = t->nb[i];
    }
    if (p.ne0 > kTopKMaxRow) throw Error("CUDA top_k: row too long");
    if (p.nrows == 0) return;
    const unsigned grid = (unsigned)(p.nrows < (1 << 20) ? p.nrows : (1 << 20));
    // Four floats of slack past the row: ptxas merges the rank loop's guarded remainder loads (up to three
    // floats after the unrolled part) into one wider load, which would read past a row of 4m+1 or 4m+2
    // values (compute-sanitizer's memcheck reported it; the values read there are never used).
    const size_t shared = (size_t)((p.ne0 + 3) / 4 + 1) * 4 * sizeof(float);
    top_k_kernel<<<grid, kThreads, shared, ctx.stream>>>(p);
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
