// Ops of mixture-of-experts routing: sum_rows, top_k and mul_mat_id (the products with the selected
// experts' matrices).
#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels.h"
#include "ops.h"

namespace ggml::cpu {

namespace {

template <typename F>
void for_rows_of(const ComputeParams& p, const Tensor* t, F&& f) {
    int64_t r0, r1;
    split_rows(t->nrows(), p.ith, p.nth, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t i1 = r % t->ne[1], i2 = (r / t->ne[1]) % t->ne[2], i3 = r / (t->ne[1] * t->ne[2]);
        f(i1, i2, i3);
    }
}

size_t round64(size_t n) {
    return (n + 63) & ~size_t(63);
}

}  // namespace

void op_sum_rows(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const size_t sa = a->nb[0] / sizeof(float);
    for_rows_of(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float* x = (const float*)a->row_ptr(i1, i2, i3);
        double sum = 0.0;
        for (int64_t i = 0; i < a->ne[0]; ++i) sum += (double)x[i * sa];
        *(float*)t->row_ptr(i1, i2, i3) = (float)sum;
    });
}

void op_top_k(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const int k = t->param<int32_t>(0);
    const int64_t n = a->ne[0];
    const size_t sa = a->nb[0] / sizeof(float);
    std::vector<int32_t> idx((size_t)n);
    for_rows_of(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float* x = (const float*)a->row_ptr(i1, i2, i3);
        std::iota(idx.begin(), idx.end(), 0);
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t l, int32_t r) {
            return x[l * sa] > x[r * sa] || (x[l * sa] == x[r * sa] && l < r);
        });
        std::copy(idx.begin(), idx.begin() + k, (int32_t*)t->row_ptr(i1, i2, i3));
    });
}

// Per share: one activation row in the weights' paired type.
size_t mul_mat_id_work_size(const Tensor* t, int nth) {
    const Type vdt = type_traits(t->src[0]->type).vec_dot_type;
    return round64(row_size(vdt, t->src[1]->ne[0])) * (size_t)nth + 64;
}

void op_mul_mat_id(const ComputeParams& p, Tensor* t) {
    const Tensor* as = t->src[0];
    const Tensor* b = t->src[1];
    const Tensor* ids = t->src[2];
    const Type vdt = type_traits(as->type).vec_dot_type;
    const int64_t K = as->ne[0], M = as->ne[1], n_used = ids->ne[0], n_tokens = ids->ne[1];
    const auto dot = cpu::vec_dot(as->type);
    const auto quant = quantize_activations(vdt);
    char* qb =
        (char*)(((uintptr_t)p.wdata + 63) & ~uintptr_t(63)) + round64(row_size(vdt, K)) * (size_t)p.ith;
    // Work items: one (token, selected expert) column each, all M outputs of it.
    for (int64_t c = p.counter->fetch_add(1); c < n_used * n_tokens; c = p.counter->fetch_add(1)) {
        const int64_t e = c % n_used, tok = c / n_used;
        const int32_t expert = *(const int32_t*)((const char*)ids->data + e * ids->nb[0] + tok * ids->nb[1]);
        if (expert < 0 || expert >= as->ne[2]) fatal("mul_mat_id: expert id out of range");
        const float* x = (const float*)b->row_ptr(b->ne[1] == 1 ? 0 : e, tok);
        const void* xq = x;
        if (vdt != Type::F32) {
            quant(x, qb, K);
            xq = qb;
        }
        float* y = (float*)t->row_ptr(e, tok);
        for (int64_t m = 0; m < M; ++m) dot(K, &y[m], as->row_ptr(m, expert), xq);
    }
}

}  // namespace ggml::cpu
