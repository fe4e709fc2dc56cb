#include "error.h"

#include <string>

#include "ggml/ggml.h"

namespace ggml::cuda {

void throw_cuda_error(const char* call, cudaError_t err, const char* file, int line) {
    throw Error(std::string("CUDA error: ") + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) +
                ") in " + call + " at " + file + ":" + std::to_string(line));
}

void throw_cublas_error(const char* call, cublasStatus_t st, const char* file, int line) {
    throw Error(std::string("cuBLAS error: ") + cublasGetStatusString(st) + " in " + call + " at " + file +
                ":" + std::to_string(line));
}

}  // namespace ggml::cuda
