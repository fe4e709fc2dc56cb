// get_rows: rows of a (any dequantizable type) picked by I32 ids, as F32. An id out of range yields a
// zero row and an error at the next synchronization (the CPU aborts; a server must not).
#include "common.cuh"
#include "dequantize.h"
#include "error.h"
#include "ops.h"

namespace ggml::cuda {

namespace {

struct GetRowsArgs {
    const char* a;
    const char* ids;
    char* d;
    Type type;
    int64_t ne0, n_ids, a_rows, a_ne2;
    size_t anb1, anb2, inb0, inb1, dnb1, dnb2;
    int* error_flag;
};

__global__ void get_rows_kernel(GetRowsArgs p, int64_t n) {
    CUDA_FOR(idx, n) {
        const int64_t j = idx % p.ne0, r = idx / p.ne0;
        const int64_t i1 = r % p.n_ids, i2 = r / p.n_ids;
        const int32_t row = *(const int32_t*)(p.ids + i1 * p.inb0 + i2 * p.inb1);
        float* y = (float*)(p.d + i1 * p.dnb1 + i2 * p.dnb2);
        if (row < 0 || row >= p.a_rows) {
            y[j] = 0.0f;
            report(p.error_flag, kErrGetRowsId);
            continue;
        }
        y[j] = dequantize(p.type, p.a + row * p.anb1 + (i2 % p.a_ne2) * p.anb2, j);
    }
}

}  // namespace

void run_get_rows(ExecContext& ctx, Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* ids = t->src[1];
    GetRowsArgs p{(const char*)a->data,
                  (const char*)ids->data,
                  (char*)t->data,
                  a->type,
                  t->ne[0],
                  t->ne[1],
                  a->ne[1],
                  a->ne[2],
                  a->nb[1],
                  a->nb[2],
                  ids->nb[0],
                  ids->nb[1],
                  t->nb[1],
                  t->nb[2],
                  ctx.error_flag};
    const int64_t n = t->ne[0] * t->ne[1] * t->ne[2];
    if (n == 0) return;
    get_rows_kernel<<<grid_1d(n), kBlock, 0, ctx.stream>>>(p, n);
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
