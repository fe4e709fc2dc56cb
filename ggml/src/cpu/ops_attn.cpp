// Fused attention (flash attention) on the CPU: per query row, scores, softmax and the weighted sum
// of values without materializing the [n_kv, n_q, H] score tensor. Its float steps are exactly those
// of the unfused path (mul_mat of K and Q, soft_max, mul_mat_t of V), so both give the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attn_kernels.h"
#include "kernels.h"
#include "kv_blocks.h"
#include "ops.h"

namespace ggml::cpu {

namespace {

constexpr int64_t kRows = 16;  // query rows of one head per work chunk

size_t round64(size_t n) {
    return (n + 63) & ~size_t(63);
}

// Per-thread scratch: the head's values as f32, q converted to k's activation type, the row's scores
// and the double accumulator.
size_t scratch_bytes(const Tensor* t) {
    const Tensor* q = t->src[0];
    const Tensor* k = t->src[1];
    const Tensor* v = t->src[2];
    const Type vdt = type_traits(k->type).vec_dot_type;
    return round64((size_t)v->ne[0] * (size_t)v->ne[1] * sizeof(float)) + round64(row_size(vdt, q->ne[0])) +
           round64((size_t)k->ne[1] * sizeof(float)) + round64((size_t)v->ne[0] * sizeof(double));
}

}  // namespace

size_t flash_attn_work_size(const Tensor* t, int nth) {
    return scratch_bytes(t) * (size_t)nth + 64;
}

void op_flash_attn(const ComputeParams& p, Tensor* t) {
    const Tensor* q = t->src[0];  // [D, n_q, H]
    const Tensor* k = t->src[1];  // [D, n_kv, Hkv]
    const Tensor* v = t->src[2];  // [Dv, n_kv, Hkv]
    const Tensor* mask = t->src[3];
    const float* sinks = t->src[4] ? (const float*)t->src[4]->data : nullptr;  // [H]
    const float softcap = t->param<float>(1);
    // With soft-capping the score is softcap * tanh(s * (scale / softcap)): the unfused path's
    // scale(1 / softcap), tanh, scale(softcap), soft_max(scale 1) when scale is 1.
    const float scale = softcap != 0.0f ? t->param<float>(0) / softcap : t->param<float>(0);
    const int64_t D = q->ne[0], n_q = q->ne[1], H = q->ne[2], n_kv = k->ne[1], Dv = v->ne[0];
    const int64_t ratio = H / k->ne[2];
    const Type vdt = type_traits(k->type).vec_dot_type;
    const auto k_dot = cpu::vec_dot(k->type);  // the kernel mul_mat uses: FA and the unfused path agree
    const auto v_to_float = cpu::to_float(v->type);
    const auto q_convert = quantize_activations(vdt);

    char* scratch = (char*)(((uintptr_t)p.wdata + 63) & ~uintptr_t(63)) + scratch_bytes(t) * (size_t)p.ith;
    float* vals = (float*)scratch;
    void* qc = scratch + round64((size_t)Dv * (size_t)n_kv * sizeof(float));
    float* score = (float*)((char*)qc + round64(row_size(vdt, D)));
    double* acc = (double*)((char*)score + round64((size_t)n_kv * sizeof(float)));
    const float neg_inf = -std::numeric_limits<float>::infinity();

    const Tensor* blocks = kv_blocks(t);  // with it, only the cells each query sees are read
    std::vector<int32_t> chunk_list;
    const int64_t q_blocks = (n_q + kRows - 1) / kRows, planes = H * q->ne[3];
    for (int64_t c = p.counter->fetch_add(1); c < q_blocks * planes; c = p.counter->fetch_add(1)) {
        const int64_t qb = c % q_blocks, plane = c / q_blocks;
        const int64_t h = plane % H, i3 = plane / H, hk = h / ratio;
        const int64_t iq0 = qb * kRows, iq1 = std::min(n_q, iq0 + kRows);
        // Values of the cells some query of the chunk can see, as f32, converted once per chunk.
        const RowBlocks any = blocks ? kv_blocks_union(blocks, iq0, iq1, n_kv, chunk_list) : RowBlocks{};
        for (int64_t s = 0; s < kv_spans(blocks ? &any : nullptr); ++s) {
            int64_t i0, i1;
            kv_span(blocks ? &any : nullptr, s, n_kv, &i0, &i1);
            for (int64_t i = i0; i < i1; ++i) {
                bool used = !mask;
                for (int64_t iq = iq0; iq < iq1 && !used; ++iq) {
                    const char* mrow = mask->row_ptr(iq, h % mask->ne[2]);
                    const float mv = mask->type == Type::F32 ? ((const float*)mrow)[i]
                                                             : fp16_to_fp32(((const uint16_t*)mrow)[i]);
                    used = mv != neg_inf;
                }
                if (used) v_to_float(v->row_ptr(i, hk, i3), vals + i * Dv, Dv);
            }
        }
        for (int64_t iq = iq0; iq < iq1; ++iq) {
            const float* qrow = (const float*)q->row_ptr(iq, h, i3);
            if (vdt == Type::F32)
                std::memcpy(qc, qrow, (size_t)D * sizeof(float));
            else
                q_convert(qrow, qc, D);
            const char* mrow = mask ? mask->row_ptr(iq, h % mask->ne[2]) : nullptr;
            const RowBlocks rb = blocks ? kv_blocks_row(blocks, iq) : RowBlocks{};
            const RowBlocks* vis = blocks ? &rb : nullptr;
            const int64_t spans = kv_spans(vis);

            // Scores and their maximum, as soft_max computes them from mul_mat's output. Masked cells are
            // never read: other sequences' cells cannot change the result.
            float mx = neg_inf;
            for (int64_t s = 0; s < spans; ++s) {
                int64_t i0, i1;
                kv_span(vis, s, n_kv, &i0, &i1);
                for (int64_t i = i0; i < i1; ++i) {
                    float mv = 0.0f;
                    if (mrow)
                        mv = mask->type == Type::F32 ? ((const float*)mrow)[i]
                                                     : fp16_to_fp32(((const uint16_t*)mrow)[i]);
                    if (mv == neg_inf) {
                        score[i] = neg_inf;
                        continue;
                    }
                    float sc;
                    k_dot(D, &sc, k->row_ptr(i, hk, i3), qc);
                    sc *= scale;
                    if (softcap != 0.0f) sc = softcap * std::tanh(sc);
                    score[i] = sc + mv;
                    mx = score[i] > mx ? score[i] : mx;
                }
            }
            if (sinks) mx = sinks[h] > mx ? sinks[h] : mx;  // as soft_max: the sink joins max and sum
            double sum = 0.0;
            for (int64_t s = 0; s < spans; ++s) {
                int64_t i0, i1;
                kv_span(vis, s, n_kv, &i0, &i1);
                sum = exp_row(score + i0, mx, score + i0, i1 - i0, sum);
            }
            if (sinks) sum += (double)std::exp(sinks[h] - mx);
            const float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f;
            for (int64_t s = 0; s < spans; ++s) {
                int64_t i0, i1;
                kv_span(vis, s, n_kv, &i0, &i1);
                for (int64_t i = i0; i < i1; ++i) score[i] *= inv;
                // The weighted sum of values, as mul_mat_t computes it: f16-rounded weights for an f16 V,
                // products summed in double, zero weights skipped.
                if (v->type == Type::F16) round_f16_row(score + i0, i1 - i0);
            }
            weighted_sum_f64(n_kv, score, vals, (size_t)Dv, Dv, acc, (float*)t->row_ptr(h, iq, i3), vis);
        }
    }
}

}  // namespace ggml::cpu
