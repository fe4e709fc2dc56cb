// CUDA and cuBLAS status checks: a failed call throws ggml::Error naming the call, where and why.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace ggml::cuda {

[[noreturn]] void throw_cuda_error(const char* call, cudaError_t err, const char* file, int line);
[[noreturn]] void throw_cublas_error(const char* call, cublasStatus_t st, const char* file, int line);

}  // namespace ggml::cuda

#define CUDA_CHECK(call)                                                                          \
    do {                                                                                          \
        const cudaError_t err_ = (call);                                                          \
        if (err_ != cudaSuccess) ::ggml::cuda::throw_cuda_error(#call, err_, __FILE__, __LINE__); \
    } while (0)

#define CUBLAS_CHECK(call)                                                                                  \
    do {                                                                                                    \
        const cublasStatus_t st_ = (call);                                                                  \
        if (st_ != CUBLAS_STATUS_SUCCESS) ::ggml::cuda::throw_cublas_error(#call, st_, __FILE__, __LINE__); \
    } while (0)

// After a kernel launch: a bad launch configuration shows up here, not at the next synchronization.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
