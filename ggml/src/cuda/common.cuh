// Device helpers shared by the kernels: reductions, launch shapes. The kernels reproduce the CPU's
// arithmetic step by step (the library is compiled with --fmad=false, so no step is fused unless written
// as fmaf), which makes the CUDA and CPU backends agree to the bit where the CPU's reference does, and
// within an ulp elsewhere. The per-type arithmetic lives in host-and-device headers (hd.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "exact_sum.h"
#include "exec_context.h"
#include "ggml/quants.h"
#include "ggml/types.h"
#include "half.h"
#include "hd.h"

namespace ggml::cuda {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// ---- reductions ----------------------------------------------------------------------------------------

// Butterfly sum: every lane ends with the same value (addition is commutative), and the grouping depends
// only on the lane count, never on the data or on other rows.
__device__ __forceinline__ double warp_sum_double(double v) {
    for (int off = kWarp / 2; off > 0; off >>= 1) v += __shfl_xor_sync(kFullMask, v, off);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int off = kWarp / 2; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, off));
    return v;
}

// Combines the exact sums of a warp (integer adds: any grouping gives the same sum).
__device__ __forceinline__ void warp_reduce(ExactSum& s) {
    for (int off = kWarp / 2; off > 0; off >>= 1) {
        const unsigned long long l = __shfl_xor_sync(kFullMask, s.lo, off);
        const unsigned long long h = __shfl_xor_sync(kFullMask, s.hi, off);
        s.merge(l, h);
    }
}

// Block-wide reductions for blocks of whole warps; every thread gets the result. `shared` holds one slot
// per warp. Both are exact (max, integer sums), so the grouping does not matter.
__device__ __forceinline__ float block_max(float v, float* shared) {
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, nw = blockDim.x / kWarp;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    float r = shared[0];
    for (int w = 1; w < nw; ++w) r = fmaxf(r, shared[w]);
    return r;
}

__device__ __forceinline__ double block_exact_sum(ExactSum s, unsigned long long* shared) {
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, nw = blockDim.x / kWarp;
    warp_reduce(s);
    __syncthreads();
    if (lane == 0) {
        shared[2 * warp] = s.lo;
        shared[2 * warp + 1] = s.hi;
    }
    __syncthreads();
    ExactSum t;
    for (int w = 0; w < nw; ++w) t.merge(shared[2 * w], shared[2 * w + 1]);
    return t.value();
}

// Block-wide double sum with a fixed grouping (per-thread partials, butterfly per warp, warps in order).
__device__ __forceinline__ double block_sum_double(double v, double* shared) {
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, nw = blockDim.x / kWarp;
    v = warp_sum_double(v);
    __syncthreads();
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    double r = shared[0];
    for (int w = 1; w < nw; ++w) r += shared[w];
    return r;
}

// The sum of n values in order, as the CPU's loops add them (sum += v, one after another, in double):
// lane j loads value i0 + j of each step of 32, then every lane adds the step's values one by one
// (shuffles), so the whole warp ends with the sequential sum's bits. load(i) returns value i as a double.
template <class Load>
__device__ __forceinline__ double warp_sequential_sum(int64_t n, Load load) {
    const int lane = threadIdx.x % kWarp;
    double sum = 0.0;
    for (int64_t i0 = 0; i0 < n; i0 += kWarp) {
        const double v = i0 + lane < n ? load(i0 + lane) : 0.0;
        const int m = n - i0 < kWarp ? (int)(n - i0) : kWarp;
        for (int j = 0; j < m; ++j) sum += __shfl_sync(kFullMask, v, j);
    }
    return sum;
}

// ---- errors found by kernels ---------------------------------------------------------------------------
__device__ __forceinline__ void report(int* flag, int code) {
    *(volatile int*)flag = code;
}

// Launch shape for a grid-stride loop over n items.
constexpr int kBlock = 256;
inline unsigned grid_1d(int64_t n, int block = kBlock) {
    const int64_t g = (n + block - 1) / block;
    return (unsigned)(g < 1 ? 1 : g > (1 << 20) ? (1 << 20) : g);
}

// A grid-stride loop over n items.
#define CUDA_FOR(i, n)                                                        \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (int64_t)gridDim.x * blockDim.x)

}  // namespace ggml::cuda
