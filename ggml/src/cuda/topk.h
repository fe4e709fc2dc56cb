// top_k's order, for host and device (hd.h): a value goes before another when it is larger, or equal and
// at a lower index (cpu/ops_moe.cpp's comparator). That is a strict total order on a row without NaNs, so
// the k first indices are one list whatever the algorithm: the kernel places each element at its rank.
// Rows holding NaNs have no defined order on the CPU (std::partial_sort with a comparator that is not a
// strict weak order); there the results may differ.
#pragma once

#include "hd.h"

namespace ggml::cuda {

GGML_HD bool topk_before(float a, int64_t ia, float b, int64_t ib) {
    return a > b || (a == b && ia < ib);
}

// The position of element i in the row's order: how many elements go before it.
template <class Load>
GGML_HD int64_t topk_rank(Load x, int64_t n, int64_t i) {
    const float xi = x(i);
    int64_t rank = 0;
    for (int64_t j = 0; j < n; ++j) rank += topk_before(x(j), j, xi, i) ? 1 : 0;
    return rank;
}

}  // namespace ggml::cuda
