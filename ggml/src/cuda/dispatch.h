// Dispatch of graph nodes to the CUDA kernels (dispatch.cpp holds the table).
#pragma once

#include "exec_context.h"
#include "ggml/ggml.h"

namespace ggml::cuda {

bool op_supported(const Tensor* t);
bool is_view_op(Op op);
// Scratch bytes the node needs while it runs.
size_t op_scratch(const Tensor* t, bool cublas_prefill);
// Enqueues the node's kernels on ctx.stream.
void run_op(ExecContext& ctx, Tensor* t);

}  // namespace ggml::cuda
