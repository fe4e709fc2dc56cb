// The visible-block lists that ggml::with_kv_blocks attaches to the ops of an attention, as the CPU ops
// read them: per query, the blocks of cache rows it can see. Rows outside them are never touched.
#pragma once

#include <cstdint>
#include <vector>

#include "attn_kernels.h"
#include "ggml/ggml.h"

namespace ggml::cpu {

inline const Tensor* kv_blocks(const Tensor* op) {
    return op->src[kKvBlocksSrc];
}

// Query j's blocks.
inline RowBlocks kv_blocks_row(const Tensor* blocks, int64_t j) {
    const int32_t* r = (const int32_t*)((const char*)blocks->data + (size_t)j * blocks->nb[1]);
    return RowBlocks{r + 1, r[0], kKvBlock};
}

// The union of the blocks of queries [j0, j1), ascending, in `out` (its storage is `list`).
inline RowBlocks kv_blocks_union(const Tensor* blocks, int64_t j0, int64_t j1, int64_t n_rows,
                                 std::vector<int32_t>& list) {
    const int64_t nb = (n_rows + kKvBlock - 1) / kKvBlock;
    std::vector<uint8_t> seen((size_t)nb, 0);
    for (int64_t j = j0; j < j1; ++j) {
        const RowBlocks r = kv_blocks_row(blocks, j);
        for (int64_t s = 0; s < r.count; ++s) seen[(size_t)r.index[s]] = 1;
    }
    list.clear();
    for (int64_t b = 0; b < nb; ++b)
        if (seen[(size_t)b]) list.push_back((int32_t)b);
    return RowBlocks{list.data(), (int64_t)list.size(), kKvBlock};
}

// Rows [*i0, *i1) of span s of blocks (all n rows when blocks is null).
inline void kv_span(const RowBlocks* blocks, int64_t s, int64_t n, int64_t* i0, int64_t* i1) {
    if (!blocks) {
        *i0 = 0, *i1 = n;
        return;
    }
    *i0 = (int64_t)blocks->index[s] * blocks->block;
    *i1 = *i0 + blocks->block < n ? *i0 + blocks->block : n;
}

inline int64_t kv_spans(const RowBlocks* blocks) {
    return blocks ? blocks->count : 1;
}

}  // namespace ggml::cpu
