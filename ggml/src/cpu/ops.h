// CPU implementations of the ops. Each op (or phase of an op, op_phases) is computed as nth shares:
// the call with index ith computes share ith, either a static split (split_rows) or a claim loop on the
// shared counter. A share may run on any pool thread, and any thread may run several shares of one op
// (the graph loop claims shares dynamically), so an op must not assume ith is a thread.
#pragma once

#include <atomic>
#include <cstddef>

#include "ggml/ggml.h"

namespace ggml::cpu {

struct ComputeParams {
    int ith = 0, nth = 1;
    void* wdata = nullptr;  // scratch shared by all threads of this op
    size_t wsize = 0;
    // Zero at the start of the op; threads claim work chunks with fetch_add (dynamic balance when a
    // core is busy with something else).
    std::atomic<int64_t>* counter = nullptr;
    // Which phase of a multi-phase op (op_phases) this call computes. The phases of a node run in order,
    // each finished by every thread's share before the next starts.
    int phase = 0;
};

// Scratch bytes an op needs (the planner sizes one work buffer for the largest op).
size_t op_work_size(const Tensor* t, int nth);
// Phases of an op: parts that must be finished on every thread before the next starts (mul_mat and
// mul_mat_id quantize their activations, then multiply). Most ops have one.
int op_phases(const Tensor* t);
// Whether the CPU can compute this node.
bool op_supported(const Tensor* t);
void compute_op(const ComputeParams& p, Tensor* t);

// Per-op kernels (ops_*.cpp).
void op_dup(const ComputeParams& p, Tensor* t);
void op_add(const ComputeParams& p, Tensor* t);
void op_mul(const ComputeParams& p, Tensor* t);
void op_scale(const ComputeParams& p, Tensor* t);
void op_rms_norm(const ComputeParams& p, Tensor* t);
void op_norm(const ComputeParams& p, Tensor* t);
void op_mul_mat(const ComputeParams& p, Tensor* t);
void op_mul_mat_t(const ComputeParams& p, Tensor* t);
void op_get_rows(const ComputeParams& p, Tensor* t);
void op_set_rows(const ComputeParams& p, Tensor* t);
void op_rope(const ComputeParams& p, Tensor* t);
void op_soft_max(const ComputeParams& p, Tensor* t);
void op_silu(const ComputeParams& p, Tensor* t);
void op_swiglu(const ComputeParams& p, Tensor* t);
void op_swiglu_oai(const ComputeParams& p, Tensor* t);
void op_gelu(const ComputeParams& p, Tensor* t);
// The GELU formula (tanh approximation) in f32, the reference of op_gelu's table.
float gelu_tanh_ref(float x);
void op_tanh(const ComputeParams& p, Tensor* t);
void op_gelu_erf(const ComputeParams& p, Tensor* t);
void op_div(const ComputeParams& p, Tensor* t);
void op_sum_rows(const ComputeParams& p, Tensor* t);
void op_top_k(const ComputeParams& p, Tensor* t);
void op_mul_mat_id(const ComputeParams& p, Tensor* t);
size_t mul_mat_id_work_size(const Tensor* t, int nth);
void op_flash_attn(const ComputeParams& p, Tensor* t);

// Kernels run on pool threads and cannot throw: inputs are validated when the graph is built, so a
// violation here is a bug. Prints the message and aborts.
[[noreturn]] void fatal(const char* msg);

// Rows [r0, r1) of n rows handled by thread ith of nth.
inline void split_rows(int64_t n, int ith, int nth, int64_t* r0, int64_t* r1) {
    const int64_t per = (n + nth - 1) / nth;
    *r0 = per * ith < n ? per * ith : n;
    *r1 = *r0 + per < n ? *r0 + per : n;
}

}  // namespace ggml::cpu
