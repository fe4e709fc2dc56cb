// mul_mat_id (mixture-of-experts products): mul_mat's machinery with a routing. The activations are
// quantized to the weight type's paired type by the reference quantizers (quantize_activation_rows, as
// mul_mat does), then the mat-vec kernels compute each output (expert row, selected slot, token) with
// the reference dot product (launch_mul_mat_vec with MatVecIds): expert ids[e, t]'s matrix times row
// e % n_b of token t's activations. The CPU's op_mul_mat_id (cpu/ops_moe.cpp) computes each output as
// one dot product of the same two rows, so block formats give its bits, F32/F16/BF16 those of mul_mat.
#include "common.cuh"
#include "error.h"
#include "ops.h"

namespace ggml::cuda {

size_t mul_mat_id_scratch(const Tensor* t) {
    const Tensor* b = t->src[1];
    const Type vdt = type_traits(t->src[0]->type).vec_dot_type;
    return b->type == vdt ? 0 : row_size(vdt, b->ne[0]) * (size_t)b->nrows();
}

void run_mul_mat_id(ExecContext& ctx, Tensor* t) {
    const Tensor* as = t->src[0];   // [K, M, n_expert]
    const Tensor* b = t->src[1];    // F32 [K, n_b, n_tokens], n_b 1 or n_used
    const Tensor* ids = t->src[2];  // I32 [n_used, n_tokens]
    const Type vdt = type_traits(as->type).vec_dot_type;
    MatVecArgs p{};
    p.a = (const char*)as->data;
    p.a_nb1 = as->nb[1], p.a_nb2 = as->nb[2], p.a_nb3 = as->nb[3];
    p.b = (const char*)b->data;
    p.b_nb1 = b->nb[1], p.b_nb2 = b->nb[2], p.b_nb3 = b->nb[3];
    if (b->type != vdt) {
        if (mul_mat_id_scratch(t) > ctx.scratch_size) throw Error("CUDA mul_mat_id: scratch too small");
        quantize_activation_rows(b, vdt, ctx.scratch, ctx.stream);
        const size_t rs = row_size(vdt, b->ne[0]);
        p.b = ctx.scratch;
        p.b_nb1 = rs;
        p.b_nb2 = rs * (size_t)b->ne[1];
        p.b_nb3 = p.b_nb2 * (size_t)b->ne[2];
    }
    p.dst = (char*)t->data;
    p.d_nb1 = t->nb[1], p.d_nb2 = t->nb[2], p.d_nb3 = t->nb[3];
    p.K = as->ne[0];
    p.M = as->ne[1];
    p.N = ids->ne[0];    // columns: the selected slots
    p.ne2 = ids->ne[1];  // planes: the tokens
    p.ne3 = 1;
    p.r2 = p.r3 = 1;
    const MatVecIds id{(const char*)ids->data, ids->nb[0], ids->nb[1], b->ne[1], as->ne[2], ctx.error_flag};
    launch_mul_mat_vec(as->type, p, ctx.stream, &id);
}

}  // namespace ggml::cuda
