// dup and cont: copies that follow the source's strides, converting the type on the way. Same type with
// contiguous rows copies bytes; otherwise values go through float (dequantized exactly as the CPU does)
// and are stored as F32/F16/BF16 or quantized per block with the reference quantizers.
#include "common.cuh"
#include "dequantize.h"
#include "error.h"
#include "ops.h"
#include "quantize.h"

namespace ggml::cuda {

namespace {

struct CpyArgs {
    const char* s;
    char* d;
    Type stype, dtype;
    int64_t ne[4];
    size_t snb[4], dnb[4];
};

// Row (i1, i2, i3) from linear row r.
__device__ __forceinline__ void row_index(const CpyArgs& p, int64_t r, int64_t& i1, int64_t& i2,
                                          int64_t& i3) {
    i1 = r % p.ne[1];
    i2 = (r / p.ne[1]) % p.ne[2];
    i3 = r / (p.ne[1] * p.ne[2]);
}

// Same type, rows of row_bytes contiguous bytes in both tensors.
__global__ void copy_bytes_kernel(CpyArgs p, int64_t row_bytes, int64_t n) {
    CUDA_FOR(idx, n) {
        const int64_t b = idx % row_bytes;
        int64_t i1, i2, i3;
        row_index(p, idx / row_bytes, i1, i2, i3);
        p.d[i1 * p.dnb[1] + i2 * p.dnb[2] + i3 * p.dnb[3] + b] =
            p.s[i1 * p.snb[1] + i2 * p.snb[2] + i3 * p.snb[3] + b];
    }
}

// Element i0 of source row (i1, i2, i3) as float: strided for the non-block types, dequantized otherwise.
__device__ __forceinline__ float load_value(const CpyArgs& p, int64_t i0, int64_t i1, int64_t i2,
                                            int64_t i3) {
    const char* row = p.s + i1 * p.snb[1] + i2 * p.snb[2] + i3 * p.snb[3];
    switch (p.stype) {
        case Type::F32:
            return *(const float*)(row + i0 * p.snb[0]);
        case Type::F16:
            return h2f(*(const uint16_t*)(row + i0 * p.snb[0]));
        case Type::BF16:
            return bf2f(*(const uint16_t*)(row + i0 * p.snb[0]));
        case Type::I32:
            return (float)*(const int32_t*)(row + i0 * p.snb[0]);
        default:
            return dequantize(p.stype, row, i0);  // block types: rows are contiguous
    }
}

// One destination block (one value for F32/F16/BF16) per thread.
__global__ void convert_kernel(CpyArgs p, int64_t block, int64_t n) {
    const int64_t blocks_per_row = p.ne[0] / block;
    CUDA_FOR(idx, n) {
        const int64_t ib = idx % blocks_per_row;
        int64_t i1, i2, i3;
        row_index(p, idx / blocks_per_row, i1, i2, i3);
        float x[QK8_0];  // the quantized destinations have blocks of 32 (supports_op)
        for (int64_t k = 0; k < block; ++k) x[k] = load_value(p, ib * block + k, i1, i2, i3);
        quantize_block(p.dtype, x, p.d + i1 * p.dnb[1] + i2 * p.dnb[2] + i3 * p.dnb[3], ib);
    }
}

}  // namespace

void run_dup(ExecContext& ctx, Tensor* t) {
    const Tensor* src = t->src[0];
    CpyArgs p{(const char*)src->data, (char*)t->data, src->type, t->type, {}, {}, {}};
    for (int i = 0; i < 4; ++i) {
        p.ne[i] = t->ne[i];
        p.snb[i] = src->nb[i];
        p.dnb[i] = t->nb[i];
    }
    if (t->nelements() == 0) return;
    if (src->type == t->type && src->rows_contiguous()) {
        const int64_t row_bytes = (int64_t)row_size(t->type, t->ne[0]);
        const int64_t n = row_bytes * t->nrows();
        copy_bytes_kernel<<<grid_1d(n), kBlock, 0, ctx.stream>>>(p, row_bytes, n);
    } else {
        const int64_t bs = block_size(t->type);
        const int64_t n = t->ne[0] / bs * t->nrows();
        convert_kernel<<<grid_1d(n), kBlock, 0, ctx.stream>>>(p, bs, n);
    }
    CUDA_CHECK_LAUNCH();
}

}  // namespace ggml::cuda
