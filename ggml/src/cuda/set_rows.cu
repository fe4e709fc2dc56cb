// set_rows: F32 rows written at I32/I64 row ids into a tensor of a cache type (F32, F16, BF16, Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL), in place, with the CPU's reference quantizers: the same bytes. One
// thread per destination block. An id out of range is skipped and reported.
#include "common.cuh"
#include "error.h"
#include "ops.h"
#include "quantize.h"

namespace ggml::cuda {

namespace {

struct SetRowsArgs {
    const char* src;
    const char* ids;
    char* dst;
    Type type;
    bool ids64;
    int64_t n_rows, dst_rows, blocks_per_row, block;
    size_t snb1, dnb1;
    int* error_flag;
};

__global__ void set_rows_kernel(SetRowsArgs p, int64_t n) {
    CUDA_FOR(idx, n) {
        const int64_t ib = idx % p.blocks_per_row, r = idx / p.blocks_per_row;
        const int64_t id = p.ids64 ? ((const int64_t*)p.ids)[r] : (int64_t)((const int32_t*)p.ids)[r];
        if (id < 0 || id >= p.dst_rows) {
            report(p.error_flag, kErrSetRowsId);
            continue;
        }
        const float* x = (const float*)(p.src + r * p.snb1) + ib * p.block;
        quantize_block(p.type, x, p.dst + id * p.dnb1, ib);
    }
}

}  // namespace

void run_set_rows(ExecContext& ctx, Tensor* t) {
    const Tensor* src = t->src[1];
    const Tensor* ids = t->src[2];
    const int64_t bs = block_size(t->type);
    SetRowsArgs p{(const char*)src->data,
                  (const char*)ids->data,
                  (char*)t->data,
                  t->type,
                  ids->type == Type::I64,
                  src->ne[1],
                  t->ne[1],
                  src->ne[0] / bs,
                  bs,
                  src->nb[1],
                  t->nb[1],
                  ctx.error_flag};
    const int64_t n = p.n_rows * p.blocks_per_row;
    if (n == 0) return;
    set_rows_kernel<<<grid_1d(n), kBlock, 0, ctx.stream>>>(p, n);
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
