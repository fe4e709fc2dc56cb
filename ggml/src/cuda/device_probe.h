#pragma once

#include <cuda_runtime.h>

namespace ggml::cuda {

// cudaSuccess if a kernel of this build runs on the current device; else the launch error (for
// example cudaErrorNoKernelImageForDevice on an architecture the build does not include).
cudaError_t probe_current_device();

}  // namespace ggml::cuda
