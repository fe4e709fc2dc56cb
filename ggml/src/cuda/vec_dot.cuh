// Dot products of a weight row with an activation row of its paired type, computed by one warp, with the
// numbers of the CPU reference (ggml/include/ggml/quants.h):
// - Block formats: each block's integer sums are exact, so lanes may split a block freely; the float
//   term of each block is formed exactly as vec_dot_*_ref forms it and the terms are added one by one
//   in block order into a float. The result equals the reference's bit for bit.
// - F32, F16, BF16: exact products summed in double (per-lane partials, fixed butterfly), rounded once.
// Either way an output depends only on its two rows, never on the batch around it.
#pragma once

#include "block_dot.h"
#include "common.cuh"

namespace ggml::cuda {

// Reference order for block formats: terms added one by one in block order (every lane gets the sum).
// Two steps of kGroups blocks per iteration: their loads and integer sums are independent, so they are in
// flight together; the terms are still added one by one in block order.
template <Type T>
__device__ float warp_dot_blocks(const char* xrow, const char* yrow, int64_t n) {
    using Q = QDot<T>;
    constexpr int kGroups = kWarp / Q::kLanes;  // blocks per step
    constexpr int kSteps = 2;
    const int lane = threadIdx.x % kWarp, g = lane / Q::kLanes, part = lane % Q::kLanes;
    const auto* x = (const typename Q::Block*)xrow;
    const auto* y = (const typename Q::Act*)yrow;
    const int64_t nblocks = n / Q::kQK;
    float sum = 0.0f;
    for (int64_t ib0 = 0; ib0 < nblocks; ib0 += kSteps * kGroups) {
        int isum[kSteps], imins[kSteps];
#pragma unroll
        for (int s = 0; s < kSteps; ++s) {
            const int64_t ib = ib0 + s * kGroups + g;
            isum[s] = imins[s] = 0;
            if (ib < nblocks) Q::partial(x[ib], y[ib], part, isum[s], imins[s]);
        }
#pragma unroll
        for (int s = 0; s < kSteps; ++s) {
            const int64_t step0 = ib0 + s * kGroups, ib = step0 + g;
            if (step0 >= nblocks) break;  // the same for every lane
            for (int off = Q::kLanes / 2; off > 0; off >>= 1) {
                isum[s] += __shfl_xor_sync(kFullMask, isum[s], off);
                imins[s] += __shfl_xor_sync(kFullMask, imins[s], off);
            }
            const float t = ib < nblocks ? Q::term(x[ib], y[ib], isum[s], imins[s]) : 0.0f;
            const int in_step = nblocks - step0 < kGroups ? (int)(nblocks - step0) : kGroups;
            for (int j = 0; j < in_step; ++j) sum = sum + __shfl_sync(kFullMask, t, j * Q::kLanes);
        }
    }
    return sum;
}

// F32, F16, BF16 rows (the activation row has the weight's type).
template <Type T>
__device__ __forceinline__ float load_float(const char* row, int64_t i) {
    if constexpr (T == Type::F32)
        return ((const float*)row)[i];
    else if constexpr (T == Type::F16)
        return h2f(((const uint16_t*)row)[i]);
    else
        return bf2f(((const uint16_t*)row)[i]);
}

template <Type T>
__device__ float warp_dot_floats(const char* xrow, const char* yrow, int64_t n) {
    double acc = 0.0;
    for (int64_t i = threadIdx.x % kWarp; i < n; i += kWarp)
        acc += (double)load_float<T>(xrow, i) * (double)load_float<T>(yrow, i);
    return (float)warp_sum_double(acc);
}

constexpr bool is_float_type(Type t) {
    return t == Type::F32 || t == Type::F16 || t == Type::BF16;
}

// dot(x, y) over n values; x of type T, y of T's activation type. Every lane of the warp returns it.
template <Type T>
__device__ __forceinline__ float warp_dot(const char* xrow, const char* yrow, int64_t n) {
    if constexpr (is_float_type(T))
        return warp_dot_floats<T>(xrow, yrow, n);
    else
        return warp_dot_blocks<T>(xrow, yrow, n);
}

}  // namespace ggml::cuda
