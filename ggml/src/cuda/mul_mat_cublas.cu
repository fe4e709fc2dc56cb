// mul_mat for prompt batches through cuBLAS (CudaOptions::cublas_prefill): each plane of weights and
// activations is converted to f16 in scratch and multiplied with f32 accumulation. Faster for large
// batches, but its rounding differs from the reference arithmetic and depends on the batch size.
#include "common.cuh"
#include "dequantize.h"
#include "error.h"
#include "ops.h"

namespace ggml::cuda {

namespace {

constexpr size_t kAlign = 256;
size_t aligned(size_t x) {
    return (x + kAlign - 1) / kAlign * kAlign;
}

// rows x ne0 values of a (strided rows of any dequantizable type) as contiguous f16.
__global__ void to_f16_kernel(const char* src, Type type, size_t row_stride, int64_t ne0, uint16_t* out,
                              int64_t n) {
    CUDA_FOR(idx, n) {
        const int64_t j = idx % ne0, r = idx / ne0;
        out[idx] = f2h(dequantize(type, src + r * row_stride, j));
    }
}

void to_f16(const char* src, Type type, size_t row_stride, int64_t ne0, int64_t rows, uint16_t* out,
            cudaStream_t s) {
    const int64_t n = ne0 * rows;
    if (n == 0) return;
    to_f16_kernel<<<grid_1d(n), kBlock, 0, s>>>(src, type, row_stride, ne0, out, n);
    CUDA_CHECK_LAUNCH();
}

}  // namespace

size_t mul_mat_cublas_scratch(const Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    return aligned((size_t)a->ne[0] * (size_t)a->ne[1] * 2) +
           aligned((size_t)b->ne[0] * (size_t)b->ne[1] * 2);
}

void run_mul_mat_cublas(ExecContext& ctx, Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1];
    if (mul_mat_cublas_scratch(t) > ctx.scratch_size) throw Error("CUDA mul_mat: scratch too small");
    auto* a16 = (uint16_t*)ctx.scratch;
    auto* b16 = (uint16_t*)(ctx.scratch + aligned((size_t)K * (size_t)M * 2));
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    const float one = 1.0f, zero = 0.0f;
    for (int64_t i3 = 0; i3 < t->ne[3]; ++i3) {
        for (int64_t i2 = 0; i2 < t->ne[2]; ++i2) {
            to_f16((const char*)a->data + (i2 / r2) * a->nb[2] + (i3 / r3) * a->nb[3], a->type, a->nb[1], K,
                   M, a16, ctx.stream);
            to_f16((const char*)b->data + i2 * b->nb[2] + i3 * b->nb[3], b->type, b->nb[1], K, N, b16,
                   ctx.stream);
            // Column-major: C (M x N, ldc) = A^T (A stored K x M) * B (K x N).
            float* c = (float*)((char*)t->data + i2 * t->nb[2] + i3 * t->nb[3]);
            CUBLAS_CHECK(cublasGemmEx(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int)M, (int)N, (int)K, &one, a16,
                                      CUDA_R_16F, (int)K, b16, CUDA_R_16F, (int)K, &zero, c, CUDA_R_32F,
                                      (int)(t->nb[1] / sizeof(float)), CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT));
        }
    }
}

}  // namespace ggml::cuda
