// The weighted sums of attention values for a chunk of several queries of one head: the prompt paths of
// mul_mat_t and flash_attn. Each value row some query sees is converted to double once per piece of rows
// and feeds every query that sees it (weighted_sum_f64_add), so a query's sum is weighted_sum_f64's, bit for
// bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn_kernels.h"
#include "ggml/ggml.h"

namespace ggml::cpu {

constexpr int64_t kChunkQueries = 16;  // at most 16: weighted_sum_f64_add's row masks
constexpr int64_t kChunkPiece = 256;   // rows converted at a time (a multiple of kKvBlock)

// Scratch bytes one call needs for values d wide.
size_t chunk_sums_scratch_bytes(int64_t d);

// For each query q < nq (<= kChunkQueries): accs[q * d + j] = the sum, in row order, over the rows i of
// `spans` (every row of v when null) that the query sees (row q0 + q of blocks; every row without blocks),
// skipping zero weights, of weight(q, i) * value(i, j) in double; weight(q, i) = w[q * w_stride + i],
// rounded to f16 first when v is f16 (llama.cpp's product with f16 values does the same), and value(i, j)
// = v->row_ptr(i, v2, v3)'s j-th value. d = v->ne[0].
void chunk_weighted_sums(const Tensor* v, int64_t v2, int64_t v3, const float* w, size_t w_stride, int nq,
                         const Tensor* blocks, int64_t q0, const RowBlocks* spans, void* scratch, double* accs);

}  // namespace ggml::cpu
