// CPU implementations of the ops. Each runs on every thread of the pool with its index ith of nth and
// computes its share; ops that need phases call params.barrier() (all threads must reach it).
#pragma once

#include <atomic>
#include <cstddef>

#include "ggml/ggml.h"
#include "threadpool.h"

namespace ggml::cpu {

struct ComputeParams {
    int ith = 0, nth = 1;
    void* wdata = nullptr;  // scratch shared by all threads of this op
    size_t wsize = 0;
    ThreadPool* pool = nullptr;
    // Zero at the start of the op; threads claim work chunks with fetch_add (dynamic balance when a
    // core is busy with something else).
    std::atomic<int64_t>* counter = nullptr;
    void barrier() const {
        if (pool && nth > 1) pool->barrier();
    }
};

// Scratch bytes an op needs (the planner sizes one work buffer for the largest op).
size_t op_work_size(const Tensor* t, int nth);
// Whether the CPU can compute this node.
bool op_supported(const Tensor* t);
void compute_op(const ComputeParams& p, Tensor* t);

// Per-op kernels (ops_*.cpp).
void op_dup(const ComputeParams& p, Tensor* t);
void op_add(const ComputeParams& p, Tensor* t);
void op_mul(const ComputeParams& p, Tensor* t);
void op_scale(const ComputeParams& p, Tensor* t);
void op_rms_norm(const ComputeParams& p, Tensor* t);
void op_mul_mat(const ComputeParams& p, Tensor* t);
void op_mul_mat_t(const ComputeParams& p, Tensor* t);
void op_get_rows(const ComputeParams& p, Tensor* t);
void op_set_rows(const ComputeParams& p, Tensor* t);
void op_rope(const ComputeParams& p, Tensor* t);
void op_soft_max(const ComputeParams& p, Tensor* t);
void op_silu(const ComputeParams& p, Tensor* t);
void op_swiglu(const ComputeParams& p, Tensor* t);
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
