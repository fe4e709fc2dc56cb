// Fused attention with an online softmax (flash attention) on the CPU.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ops.h"

namespace ggml::cpu {

size_t flash_attn_work_size(const Tensor* t, int nth) {
    const Tensor* q = t->src[0];
    const Tensor* k = t->src[1];
    const Tensor* v = t->src[2];
    const Type vdt = type_traits(k->type).vec_dot_type;
    // per thread: q converted to k's activation type, the f32 accumulator and a dequantized v row
    const size_t per = row_size(vdt, q->ne[0]) + 2 * (size_t)v->ne[0] * sizeof(float) + 64;
    return per * (size_t)nth;
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

    const size_t per = row_size(vdt, D) + 2 * (size_t)Dv * sizeof(float) + 64;
    char* scratch = (char*)p.wdata + per * (size_t)p.ith;
    void* qc = scratch;
    float* acc = (float*)(((uintptr_t)scratch + row_size(vdt, D) + 31) & ~uintptr_t(31));
    float* vrow = acc + Dv;
    const float neg_inf = -std::numeric_limits<float>::infinity();

    int64_t r0, r1;
    split_rows(n_q * H * q->ne[3], p.ith, p.nth, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t h = r % H, iq = (r / H) % n_q, i3 = r / (H * n_q);
        const float* qrow = (const float*)q->row_ptr(iq, h, i3);
        if (vdt == Type::F32)
            std::memcpy(qc, qrow, (size_t)D * sizeof(float));
        else
            q_convert(qrow, qc, D);
        const float* mrow = nullptr;
        std::vector<float> m16;
        if (mask) {
            if (mask->type == Type::F32) {
                mrow = (const float*)mask->row_ptr(iq);
            } else {
                m16.resize((size_t)n_kv);
                for (int64_t i = 0; i < n_kv; ++i) m16[i] = fp16_to_fp32(((const uint16_t*)mask->row_ptr(iq))[i]);
                mrow = m16.data();
            }
        }
        float M = neg_inf, S = 0.0f;
        std::fill(acc, acc + Dv, 0.0f);
        const int64_t hk = h / ratio;
        for (int64_t i = 0; i < n_kv; ++i) {
            const float mv = mrow ? mrow[i] : 0.0f;
            if (mv == neg_inf) continue;  // skipped exactly: other sequences' cells never matter
            float s;
            k_dot(D, &s, k->row_ptr(i, hk, i3), qc);
            s = s * scale + mv;
            float vs;
            if (s > M) {
                const float ms = M == neg_inf ? 0.0f : std::exp(M - s);
                for (int64_t d = 0; d < Dv; ++d) acc[d] *= ms;
                S *= ms;
                M = s;
                vs = 1.0f;
            } else {
                vs = std::exp(s - M);
            }
            const char* vr = v->row_ptr(i, hk, i3);
            const float* vf;
            if (v->type == Type::F32) {
                vf = (const float*)vr;
            } else {
                v_to_float(vr, vrow, Dv);
                vf = vrow;
            }
            for (int64_t d = 0; d < Dv; ++d) acc[d] += vs * vf[d];
            S += vs;
        }
        float* out = (float*)t->row_ptr(h, iq, i3);
        const float inv = S > 0.0f ? 1.0f / S : 0.0f;
        for (int64_t d = 0; d < Dv; ++d) out[d] = acc[d] * inv;
    }
}

}  // namespace ggml::cpu
