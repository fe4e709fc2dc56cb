// The CPU op table: one row per op (kernel, scratch size). Dispatch is a lookup.
#include <cstdio>
#include <cstdlib>

#include "ops.h"

namespace ggml::cpu {

size_t mul_mat_work_size(const Tensor* t, int nth);
size_t flash_attn_work_size(const Tensor* t, int nth);
size_t mul_mat_t_work_size(const Tensor* t, int nth);
int mul_mat_phases(const Tensor* t);
int mul_mat_id_phases(const Tensor* t);

namespace {

void op_noop(const ComputeParams&, Tensor*) {}

struct OpRow {
    void (*compute)(const ComputeParams&, Tensor*);
    size_t (*work_size)(const Tensor*, int nth);
};

size_t no_work(const Tensor*, int) { return 0; }

const OpRow kOps[] = {
    /* None      */ {op_noop, no_work},
    /* Dup       */ {op_dup, no_work},
    /* Add       */ {op_add, no_work},
    /* Mul       */ {op_mul, no_work},
    /* Scale     */ {op_scale, no_work},
    /* RmsNorm   */ {op_rms_norm, no_work},
    /* MulMat    */ {op_mul_mat, mul_mat_work_size},
    /* MulMatT   */ {op_mul_mat_t, mul_mat_t_work_size},
    /* GetRows   */ {op_get_rows, no_work},
    /* SetRows   */ {op_set_rows, no_work},
    /* Reshape   */ {op_noop, no_work},
    /* View      */ {op_noop, no_work},
    /* Permute   */ {op_noop, no_work},
    /* Transpose */ {op_noop, no_work},
    /* Cont      */ {op_dup, no_work},
    /* Rope      */ {op_rope, no_work},
    /* SoftMax   */ {op_soft_max, no_work},
    /* Silu      */ {op_silu, no_work},
    /* SwiGlu    */ {op_swiglu, no_work},
    /* FlashAttn */ {op_flash_attn, flash_attn_work_size},
    /* Gelu      */ {op_gelu, no_work},
    /* Tanh      */ {op_tanh, no_work},
    /* Div       */ {op_div, no_work},
    /* SumRows   */ {op_sum_rows, no_work},
    /* TopK      */ {op_top_k, no_work},
    /* MulMatId  */ {op_mul_mat_id, mul_mat_id_work_size},
    /* Norm      */ {op_norm, no_work},
    /* SwiGluOai */ {op_swiglu_oai, no_work},
    /* GeluErf   */ {op_gelu_erf, no_work},
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == (size_t)Op::Count, "one row per op");

}  // namespace

[[noreturn]] void fatal(const char* msg) {
    std::fprintf(stderr, "ggml cpu: fatal: %s\n", msg);
    std::abort();
}

bool op_supported(const Tensor* t) { return (size_t)t->op < (size_t)Op::Count; }

int op_phases(const Tensor* t) {
    if (t->op == Op::MulMat) return mul_mat_phases(t);
    if (t->op == Op::MulMatId) return mul_mat_id_phases(t);
    return 1;
}

size_t op_work_size(const Tensor* t, int nth) { return kOps[(size_t)t->op].work_size(t, nth); }

void compute_op(const ComputeParams& p, Tensor* t) { kOps[(size_t)t->op].compute(p, t); }

}  // namespace ggml::cpu
