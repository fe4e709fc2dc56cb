// Whether this build's kernels run on the current device (they are compiled for the architectures in
// CMAKE_CUDA_ARCHITECTURES only): a trivial kernel is launched and its status checked.
#include "device_probe.h"

namespace ggml::cuda {

namespace {
__global__ void probe_kernel(int* out) {
    *out = 1;
}
}  // namespace

cudaError_t probe_current_device() {
    int* flag = nullptr;
    cudaError_t err = cudaMalloc(&flag, sizeof(int));
    if (err != cudaSuccess) return err;
    probe_kernel<<<1, 1>>>(flag);
    err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    cudaFree(flag);
    return err;
}

}  // namespace ggml::cuda
