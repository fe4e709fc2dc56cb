// The CUDA ops (one .cu file per kernel family) and what they support; dispatch.cpp turns these into the
// op table. Every run_* enqueues its kernels on ctx.stream and returns without waiting.
#pragma once

#include <cstddef>

#include "exec_context.h"
#include "ggml/ggml.h"

namespace ggml::cuda {

// Types the kernels read and write (types.cpp).
bool can_dequantize(Type t);  // dequantize.h: any row of t as floats
bool can_quantize(Type t);    // quantize.h: write rows of t from floats (cache and activation formats)
bool has_dot(Type t);         // block_dot.h, vec_dot.cuh: mat-vec against the paired type

// Prompt batches with more columns than this use cuBLAS when enabled; decode graphs (CUDA graphs) must
// stay at or under it.
constexpr int64_t kMaxVecColumns = 8;

void run_dup(ExecContext& ctx, Tensor* t);  // dup and cont: copies and type conversions
void run_add(ExecContext& ctx, Tensor* t);
void run_mul(ExecContext& ctx, Tensor* t);
void run_swiglu(ExecContext& ctx, Tensor* t);
void run_swiglu_oai(ExecContext& ctx, Tensor* t);
void run_gelu_erf(ExecContext& ctx, Tensor* t);
void run_scale(ExecContext& ctx, Tensor* t);
void run_silu(ExecContext& ctx, Tensor* t);
void run_rms_norm(ExecContext& ctx, Tensor* t);
void run_get_rows(ExecContext& ctx, Tensor* t);
void run_set_rows(ExecContext& ctx, Tensor* t);
void run_rope(ExecContext& ctx, Tensor* t);
void run_soft_max(ExecContext& ctx, Tensor* t);
void run_mul_mat(ExecContext& ctx, Tensor* t);
void run_mul_mat_t(ExecContext& ctx, Tensor* t);
void run_flash_attn(ExecContext& ctx, Tensor* t);
void run_div(ExecContext& ctx, Tensor* t);
void run_tanh(ExecContext& ctx, Tensor* t);
void run_gelu(ExecContext& ctx, Tensor* t);
void run_norm(ExecContext& ctx, Tensor* t);
void run_sum_rows(ExecContext& ctx, Tensor* t);
void run_top_k(ExecContext& ctx, Tensor* t);
void run_mul_mat_id(ExecContext& ctx, Tensor* t);

// Longest row top_k takes (its shared memory holds the row); the CPU sorts longer ones.
constexpr int64_t kTopKMaxRow = 4096;

// Scratch bytes: activations quantized to the paired type (and the f16 operands of the cuBLAS path).
size_t mul_mat_scratch(const Tensor* t, bool cublas_prefill);
// Scratch bytes: the attention scores of one chunk of query rows.
size_t flash_attn_scratch(const Tensor* t);
// Scratch bytes: mul_mat_id's activations quantized to the paired type.
size_t mul_mat_id_scratch(const Tensor* t);

// Every row of the F32 tensor b quantized to type vdt with the reference quantizers (mul_mat.cu), into
// out: b->nrows() rows of row_size(vdt, b->ne[0]) bytes, in b's row order (dimension 1 fastest).
void quantize_activation_rows(const Tensor* b, Type vdt, char* out, cudaStream_t stream);

// Mat-vec kernels per weight type (mul_mat_vec.cu). b holds activations of the paired type.
struct MatVecArgs {
    const char* a;
    size_t a_nb1, a_nb2, a_nb3;
    const char* b;
    size_t b_nb1, b_nb2, b_nb3;
    char* dst;
    size_t d_nb1, d_nb2, d_nb3;
    int64_t K, M, N, ne2, ne3, r2, r3;
};
// mul_mat_id's routing: column c of token z (blockIdx.z) multiplies plane ids[c, z] of a (a_nb2 apart)
// with row c % n_b of token z's activations (b_nb1, b_nb2); the output is (c, z) (d_nb1, d_nb2). An id
// outside [0, n_expert) leaves its column unwritten and kErrMulMatIdId in error_flag.
struct MatVecIds {
    const char* ids;  // I32 [n_used, n_tokens]
    size_t nb0, nb1;
    int64_t n_b, n_expert;
    int* error_flag;
};
// ids null: a plain mul_mat.
void launch_mul_mat_vec(Type weight_type, const MatVecArgs& args, cudaStream_t stream,
                        const MatVecIds* ids = nullptr);
// cuBLAS path for prompt batches (mul_mat_cublas.cu); scratch as sized by mul_mat_scratch.
void run_mul_mat_cublas(ExecContext& ctx, Tensor* t);
size_t mul_mat_cublas_scratch(const Tensor* t);

}  // namespace ggml::cuda
