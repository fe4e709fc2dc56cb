// Fused attention (flash attention) on the CPU: per query row, scores, softmax and the weighted sum
// of values without materializing the [n_kv, n_q, H] score tensor. Its float steps are exactly those
// of the unfused path (mul_mat of K and Q, soft_max, mul_mat_t of V), so both give the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops.h"

namespace ggml::cpu {

namespace {

size_t round8(size_t n) {
    return (n + 7) & ~size_t(7);
}

// Per-thread scratch: q converted to k's activation type, the row's scores, a dequantized v row and
// the double accumulator.
size_t scratch_bytes(const Tensor* t) {
    const Tensor* q = t->src[0];
    const Tensor* k = t->src[1];
    const Tensor* v = t->src[2];
    const Type vdt = type_traits(k->type).vec_dot_type;
    return round8(row_size(vdt, q->ne[0])) + round8((size_t)k->ne[1] * sizeof(float)) +
           round8((size_t)v->ne[0] * sizeof(float)) + (size_t)v->ne[0] * sizeof(double);
}

}  // namespace

size_t flash_attn_work_size(const Tensor* t, int nth) {
    return scratch_bytes(t) * (size_t)nth;
}

void op_flash_attn(const ComputeParams& p, Tensor* t) {
    const Tensor* q = t->src[0];  // [D, n_q, H]
    const Tensor* k = t->src[1];  // [D, n_kv, Hkv]
    const Tensor* v = t->src[2];  // [Dv, n_kv, Hkv]
    const Tensor* mask = t->src[3];
    const float scale = t->param<float>(0);
    const int64_t D = q->ne[0], n_q = q->ne[1], H = q->ne[2], n_kv = k->ne[1], Dv = v->ne[0];
    const int64_t ratio = H / k->ne[2];
    const Type vdt = type_traits(k->type).vec_dot_type;
    const auto k_dot = type_traits(k->type).vec_dot_ref;
    const auto v_to_float = type_traits(v->type).to_float;
    const auto q_convert = type_traits(vdt).from_float_ref;

    // scratch_bytes() is a multiple of 8 and the work buffer is malloc-aligned, so every part is
    // aligned for its type.
    char* scratch = (char*)p.wdata + scratch_bytes(t) * (size_t)p.ith;
    void* qc = scratch;
    float* score = (float*)(scratch + round8(row_size(vdt, D)));
    float* vrow = score + round8((size_t)n_kv * sizeof(float)) / sizeof(float);
    double* acc = (double*)(vrow + round8((size_t)Dv * sizeof(float)) / sizeof(float));
    const float neg_inf = -std::numeric_limits<float>::infinity();

    int64_t r0, r1;
    split_rows(n_q * H * q->ne[3], p.ith, p.nth, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t h = r % H, iq = (r / H) % n_q, i3 = r / (H * n_q);
        const int64_t hk = h / ratio;
        const float* qrow = (const float*)q->row_ptr(iq, h, i3);
        if (vdt == Type::F32)
            std::memcpy(qc, qrow, (size_t)D * sizeof(float));
        else
            q_convert(qrow, qc, D);
        const char* mrow = mask ? mask->row_ptr(iq) : nullptr;

        // Scores and their maximum, as soft_max computes them from mul_mat's output. Masked cells are
        // never read: other sequences' cells cannot change the result.
        float mx = neg_inf;
        for (int64_t i = 0; i < n_kv; ++i) {
            float mv = 0.0f;
            if (mrow)
                mv = mask->type == Type::F32 ? ((const float*)mrow)[i]
                                             : fp16_to_fp32(((const uint16_t*)mrow)[i]);
            if (mv == neg_inf) {
                score[i] = neg_inf;
                continue;
            }
            float s;
            k_dot(D, &s, k->row_ptr(i, hk, i3), qc);
            score[i] = s * scale + mv;
            mx = score[i] > mx ? score[i] : mx;
        }
        double sum = 0.0;
        for (int64_t i = 0; i < n_kv; ++i) {
            const float e = score[i] == neg_inf ? 0.0f : std::exp(score[i] - mx);
            score[i] = e;
            sum += e;
        }
        const float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f;

        // The weighted sum of values, as mul_mat_t computes it: f16-rounded weights for an f16 V,
        // products summed in double, zero weights skipped.
        std::fill(acc, acc + Dv, 0.0);
        for (int64_t i = 0; i < n_kv; ++i) {
            float w = score[i] * inv;
            if (v->type == Type::F16) w = fp16_to_fp32(fp32_to_fp16(w));
            if (w == 0.0f) continue;
            const char* vr = v->row_ptr(i, hk, i3);
            const float* vf;
            if (v->type == Type::F32) {
                vf = (const float*)vr;
            } else {
                v_to_float(vr, vrow, Dv);
                vf = vrow;
            }
            for (int64_t d = 0; d < Dv; ++d) acc[d] += (double)w * (double)vf[d];
        }
        float* out = (float*)t->row_ptr(h, iq, i3);
        for (int64_t d = 0; d < Dv; ++d) out[d] = (float)acc[d];
    }
}

}  // namespace ggml::cpu
