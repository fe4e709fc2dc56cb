// Matrix products: mul_mat (weights x activations) and mul_mat_t (attention values).
#include <cstring>
#include <vector>

#include "ops.h"

namespace ggml::cpu {

size_t mul_mat_work_size(const Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    const Type vdt = type_traits(a->type).vec_dot_type;
    if (b->type == vdt) return 0;
    return row_size(vdt, b->ne[0]) * (size_t)b->nrows();
}

void op_mul_mat(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    const auto& tr = type_traits(a->type);
    const Type vdt = tr.vec_dot_type;
    const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];

    // Phase 1: activations to the paired type, once per batch.
    const char* bdata;
    size_t b_nb1, b_nb2, b_nb3;
    if (b->type == vdt) {
        bdata = (const char*)b->data;
        b_nb1 = b->nb[1], b_nb2 = b->nb[2], b_nb3 = b->nb[3];
    } else {
        const size_t rs = row_size(vdt, K);
        b_nb1 = rs, b_nb2 = rs * (size_t)N, b_nb3 = b_nb2 * (size_t)b->ne[2];
        char* w = (char*)p.wdata;
        const auto from_float = type_traits(vdt).from_float_ref;
        int64_t r0, r1;
        split_rows(b->nrows(), p.ith, p.nth, &r0, &r1);
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t i1 = r % N, i2 = (r / N) % b->ne[2], i3 = r / (N * b->ne[2]);
            from_float((const float*)b->row_ptr(i1, i2, i3), w + i1 * b_nb1 + i2 * b_nb2 + i3 * b_nb3, K);
        }
        p.barrier();
        bdata = w;
    }

    // Phase 2: every output element is one vec_dot of a weight row and an activation row, so a token's
    // result does not depend on the other tokens of the batch or on the thread count.
    const auto vec_dot = tr.vec_dot_ref;
    const int64_t n_planes = t->ne[2] * t->ne[3];
    const int64_t total_rows = M * n_planes;
    int64_t r0, r1;
    split_rows(total_rows, p.ith, p.nth, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t i01 = r % M, plane = r / M;
        const int64_t i12 = plane % t->ne[2], i13 = plane / t->ne[2];
        const char* arow = a->row_ptr(i01, i12 / r2, i13 / r3);
        for (int64_t i11 = 0; i11 < N; ++i11) {
            const char* brow = bdata + i11 * b_nb1 + i12 * b_nb2 + i13 * b_nb3;
            float* d =
                (float*)((char*)t->data + i01 * t->nb[0] + i11 * t->nb[1] + i12 * t->nb[2] + i13 * t->nb[3]);
            vec_dot(K, d, arow, brow);
        }
    }
}

void op_mul_mat_t(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];  // [D, I, ha, a3]
    const Tensor* b = t->src[1];  // [I, Q, hb, b3]
    const int64_t D = a->ne[0], I = a->ne[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    std::vector<double> acc((size_t)D);
    std::vector<float> row((size_t)D), out((size_t)D);
    const auto to_float = type_traits(a->type).to_float;
    int64_t r0, r1;
    split_rows(t->nrows(), p.ith, p.nth, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t q = r % t->ne[1], h = (r / t->ne[1]) % t->ne[2], h3 = r / (t->ne[1] * t->ne[2]);
        const float* w = (const float*)b->row_ptr(q, h, h3);
        const size_t sw = b->nb[0] / sizeof(float);
        std::fill(acc.begin(), acc.end(), 0.0);
        // Exact products (two floats fit a double) summed in double and rounded to f32 once, as
        // llama.cpp's f16 dot product sums rows shorter than 64 cells; flash_attn repeats these steps.
        // Zero weights (masked cells) are skipped.
        for (int64_t i = 0; i < I; ++i) {
            // Like a product with f16 values, the weights are rounded to f16 (llama.cpp does the same).
            const float wi = a->type == Type::F16 ? fp16_to_fp32(fp32_to_fp16(w[i * sw])) : w[i * sw];
            if (wi == 0.0f) continue;
            const char* ar = a->row_ptr(i, h / r2, h3 / r3);
            const float* av;
            if (a->type == Type::F32) {
                av = (const float*)ar;
            } else {
                to_float(ar, row.data(), D);
                av = row.data();
            }
            for (int64_t d = 0; d < D; ++d) acc[d] += (double)wi * (double)av[d];
        }
        for (int64_t d = 0; d < D; ++d) out[d] = (float)acc[d];
        std::memcpy(t->row_ptr(q, h, h3), out.data(), (size_t)D * sizeof(float));
    }
}

}  // namespace ggml::cpu
