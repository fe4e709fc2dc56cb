// The CUDA op table: one row per op (which inputs it supports, scratch bytes, the launcher). Dispatch is
// a lookup; the kernels live in one .cu file per family (ops.h).
#include "dispatch.h"

#include "ops.h"

namespace ggml::cuda {

namespace {

bool is_float(Type t) {
    return t == Type::F32 || t == Type::F16 || t == Type::BF16;
}

// KV cache formats: set_rows targets and flash_attn K types.
bool is_cache_type(Type t) {
    switch (t) {
        case Type::F32:
        case Type::F16:
        case Type::BF16:
        case Type::Q8_0:
        case Type::Q4_0:
        case Type::Q4_1:
        case Type::Q5_0:
        case Type::Q5_1:
        case Type::IQ4_NL:
            return true;
        default:
            return false;
    }
}

bool all(const Tensor*) {
    return true;
}
bool none(const Tensor*) {
    return false;
}

bool dup_ok(const Tensor* t) {
    const Tensor* s = t->src[0];
    if (s->type == t->type && s->rows_contiguous()) return true;  // byte copy
    const bool readable =
        is_float(s->type) || s->type == Type::I32 || (can_dequantize(s->type) && s->rows_contiguous());
    const bool writable = is_float(t->type) || (can_quantize(t->type) && block_size(t->type) == 32);
    return readable && writable && t->is_contiguous();
}

bool mul_mat_ok(const Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    const Type vdt = type_traits(a->type).vec_dot_type;
    return has_dot(a->type) && can_quantize(vdt) && (b->type == Type::F32 || b->type == vdt) &&
           a->rows_contiguous() && b->rows_contiguous();
}

bool mul_mat_t_ok(const Tensor* t) {
    return is_float(t->src[0]->type) && t->src[1]->type == Type::F32;
}

bool get_rows_ok(const Tensor* t) {
    return can_dequantize(t->src[0]->type) && t->src[1]->type == Type::I32;
}

bool set_rows_ok(const Tensor* t) {
    const Tensor* ids = t->src[2];
    return is_cache_type(t->type) && t->src[1]->type == Type::F32 && t->src[1]->rows_contiguous() &&
           (ids->type == Type::I32 || ids->type == Type::I64) && ids->is_contiguous();
}

// Normal and neox modes, frequency factors (contiguous F32), YaRN, the attention factor: all of rope_ext.
bool rope_ok(const Tensor* t) {
    const Tensor* ff = t->src[2];
    return ff == nullptr || (ff->type == Type::F32 && ff->is_contiguous());
}

// Soft-capping included (tanh.h).
bool flash_attn_ok(const Tensor* t) {
    const Tensor* q = t->src[0];
    const Tensor* k = t->src[1];
    const Tensor* v = t->src[2];
    return is_cache_type(k->type) && can_dequantize(v->type) && q->rows_contiguous() &&
           k->rows_contiguous() && v->rows_contiguous() &&
           q->ne[0] % block_size(type_traits(k->type).vec_dot_type) == 0;
}

// Rows up to kTopKMaxRow values (the kernel keeps a row in shared memory).
bool top_k_ok(const Tensor* t) {
    return t->src[0]->ne[0] <= kTopKMaxRow;
}

// Every weight type mul_mat takes, with F32 activations; tokens on the grid's z axis (at most 65535).
bool mul_mat_id_ok(const Tensor* t) {
    const Tensor* as = t->src[0];
    const Tensor* b = t->src[1];
    const Tensor* ids = t->src[2];
    const Type vdt = type_traits(as->type).vec_dot_type;
    return has_dot(as->type) && can_quantize(vdt) && b->type == Type::F32 && as->rows_contiguous() &&
           b->rows_contiguous() && ids->type == Type::I32 && ids->ne[1] <= 65535;
}

size_t no_scratch(const Tensor*, bool) {
    return 0;
}
size_t mul_mat_scratch_row(const Tensor* t, bool cublas) {
    return mul_mat_scratch(t, cublas);
}
size_t flash_attn_scratch_row(const Tensor* t, bool) {
    return flash_attn_scratch(t);
}
size_t mul_mat_id_scratch_row(const Tensor* t, bool) {
    return mul_mat_id_scratch(t);
}
void noop(ExecContext&, Tensor*) {}

struct OpRow {
    bool (*supported)(const Tensor*);
    size_t (*scratch)(const Tensor*, bool cublas_prefill);
    void (*run)(ExecContext&, Tensor*);
};

const OpRow kOps[] = {
    /* None      */ {none, no_scratch, noop},
    /* Dup       */ {dup_ok, no_scratch, run_dup},
    /* Add       */ {all, no_scratch, run_add},
    /* Mul       */ {all, no_scratch, run_mul},
    /* Scale     */ {all, no_scratch, run_scale},
    /* RmsNorm   */ {all, no_scratch, run_rms_norm},
    /* MulMat    */ {mul_mat_ok, mul_mat_scratch_row, run_mul_mat},
    /* MulMatT   */ {mul_mat_t_ok, no_scratch, run_mul_mat_t},
    /* GetRows   */ {get_rows_ok, no_scratch, run_get_rows},
    /* SetRows   */ {set_rows_ok, no_scratch, run_set_rows},
    /* Reshape   */ {all, no_scratch, noop},
    /* View      */ {all, no_scratch, noop},
    /* Permute   */ {all, no_scratch, noop},
    /* Transpose */ {all, no_scratch, noop},
    /* Cont      */ {dup_ok, no_scratch, run_dup},
    /* Rope      */ {rope_ok, no_scratch, run_rope},
    /* SoftMax   */ {all, no_scratch, run_soft_max},
    /* Silu      */ {all, no_scratch, run_silu},
    /* SwiGlu    */ {all, no_scratch, run_swiglu},
    /* FlashAttn */ {flash_attn_ok, flash_attn_scratch_row, run_flash_attn},
    /* Gelu      */ {all, no_scratch, run_gelu},
    /* Tanh      */ {all, no_scratch, run_tanh},
    /* Div       */ {all, no_scratch, run_div},
    /* SumRows   */ {all, no_scratch, run_sum_rows},
    /* TopK      */ {top_k_ok, no_scratch, run_top_k},
    /* MulMatId  */ {mul_mat_id_ok, mul_mat_id_scratch_row, run_mul_mat_id},
    /* Norm      */ {all, no_scratch, run_norm},
    /* SwiGluOai */ {all, no_scratch, run_swiglu_oai},
    /* GeluErf   */ {all, no_scratch, run_gelu_erf},
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == (size_t)Op::Count, "one row per op");

const OpRow& row(const Tensor* t) {
    return kOps[(size_t)t->op];
}

}  // namespace

bool op_supported(const Tensor* t) {
    return (size_t)t->op < (size_t)Op::Count && row(t).supported(t);
}

bool is_view_op(Op op) {
    return op == Op::Reshape || op == Op::View || op == Op::Permute || op == Op::Transpose;
}

size_t op_scratch(const Tensor* t, bool cublas_prefill) {
    return row(t).scratch(t, cublas_prefill);
}

void run_op(ExecContext& ctx, Tensor* t) {
    row(t).run(ctx, t);
}

}  // namespace ggml::cuda
