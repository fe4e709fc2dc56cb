// The operands of a row op (rms_norm, norm, sum_rows): source rows of ne0 values at any strides, and a
// destination row for each, rows numbered over dimensions 1-3 of the destination.
#pragma once

#include <cstdint>

#include "ggml/ggml.h"

namespace ggml::cuda {

struct RowArgs {
    const char* a;
    char* d;
    int64_t ne0, ne1, ne2, nrows;
    size_t anb[4], dnb[4];

    // t = op(src[0]) row by row.
    static RowArgs of(const Tensor* t) {
        const Tensor* src = t->src[0];
        RowArgs p{(const char*)src->data, (char*)t->data, src->ne[0], t->ne[1], t->ne[2], t->nrows(), {}, {}};
        for (int i = 0; i < 4; ++i) {
            p.anb[i] = src->nb[i];
            p.dnb[i] = t->nb[i];
        }
        return p;
    }
    __device__ const char* src_row(int64_t r) const {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        return a + i1 * anb[1] + i2 * anb[2] + i3 * anb[3];
    }
    __device__ char* dst_row(int64_t r) const {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        return d + i1 * dnb[1] + i2 * dnb[2] + i3 * dnb[3];
    }
    // Value i of source row x.
    __device__ float src_at(const char* x, int64_t i) const { return *(const float*)(x + i * anb[0]); }
};

}  // namespace ggml::cuda
