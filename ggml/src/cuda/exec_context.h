// What an op needs to enqueue its kernels: the backend's stream, scratch memory sized by the op's
// scratch function before the graph is enqueued (so capture into a CUDA graph allocates nothing), the
// error word kernels report into, and cuBLAS when prompt batches use it.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace ggml::cuda {

// Kernels cannot throw: they skip the bad element and leave one of these codes in host-mapped memory,
// which the backend turns into an Error at its next synchronization.
enum KernelError : int { kErrNone = 0, kErrGetRowsId = 1, kErrSetRowsId = 2, kErrMulMatIdId = 3 };

struct ExecContext {
    cudaStream_t stream = nullptr;
    char* scratch = nullptr;  // device memory, valid for the op being enqueued
    size_t scratch_size = 0;
    int* error_flag = nullptr;        // device address of a host-mapped int (KernelError above)
    cublasHandle_t cublas = nullptr;  // non-null only with CudaOptions::cublas_prefill
};

}  // namespace ggml::cuda
