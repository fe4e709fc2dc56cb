// Fused attention (flash attention) on the CPU: per query row, scores, softmax and the weighted sum
// of values without materializing the [n_kv, n_q, H] score tensor. Its float steps are exactly those
// of the unfused path (mul_mat of K and Q, soft_max, mul_mat_t of V), so both give the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attn_chunk.h"
#include "attn_kernels.h"
#include "kernels.h"
#include "kv_blocks.h"
#include "ops.h"

namespace ggml::cpu {

namespace {

constexpr int64_t kRows = kChunkQueries;  // query rows of one head per work chunk

size_t round64(size_t n) {
    return (n + 63) & ~size_t(63);
}

// Per-thread scratch. One query: the head's values as f32, q converted to k's activation type, the
// row's scores and the double accumulator. A chunk of queries: their converted rows, their scores,
// chunk_weighted_sums' scratch and the sums.
struct Scratch {
    float* vals;
    void* qc;
    float* score;
    double* acc;
    char* qcs;
    float* scores;
    void* chunk;
    double* accs;
};

Scratch carve(const Tensor* t, char* base, size_t* total) {
    const Tensor* q = t->src[0];
    const Tensor* k = t->src[1];
    const Tensor* v = t->src[2];
    const Type vdt = type_traits(k->type).vec_dot_type;
    const size_t D = (size_t)q->ne[0], n_kv = (size_t)k->ne[1], Dv = (size_t)v->ne[0];
    const size_t sizes[] = {Dv * n_kv * sizeof(float),
                            row_size(vdt, (int64_t)D),
                            n_kv * sizeof(float),
                            Dv * sizeof(double),
                            kRows * row_size(vdt, (int64_t)D),
                            kRows * n_kv * sizeof(float),
                            chunk_sums_scratch_bytes((int64_t)Dv),
                            kRows * Dv * sizeof(double)};
    constexpr int kParts = sizeof(sizes) / sizeof(sizes[0]);
    char* at[kParts];
    size_t off = 0;
    for (int i = 0; i < kParts; ++i) {
        at[i] = base + off;
        off += round64(sizes[i]);
    }
    if (total) *total = off;
    return Scratch{(float*)at[0], at[1], (float*)at[2], (double*)at[3],
                   at[4],         (float*)at[5], at[6], (double*)at[7]};
}

size_t scratch_bytes(const Tensor* t) {
    size_t total = 0;
    carve(t, nullptr, &total);
    return total;
}

// The op's inputs and constants, and its path for a chunk of several queries of one head.
struct FlashAttn {
    Tensor* t;
    const Tensor *q, *k, *v, *mask, *blocks;
    const float* sinks;  // [H]
    float softcap, scale;
    int64_t D, n_kv, Dv;
    Type vdt;
    ToFloatFn v_to_float, f16_to_float;
    FromFloatFn q_convert;
    GemmTileFn k_tile;
    size_t q_bytes;

    explicit FlashAttn(Tensor* op)
        : t(op), q(op->src[0]), k(op->src[1]), v(op->src[2]), mask(op->src[3]), blocks(kv_blocks(op)),
          sinks(op->src[4] ? (const float*)op->src[4]->data : nullptr), softcap(op->param<float>(1)),
          // With soft-capping the score is softcap * tanh(s * (scale / softcap)): the unfused path's
          // scale(1 / softcap), tanh, scale(softcap), soft_max(scale 1) when scale is 1.
          scale(softcap != 0.0f ? op->param<float>(0) / softcap : op->param<float>(0)), D(q->ne[0]),
          n_kv(k->ne[1]), Dv(v->ne[0]), vdt(type_traits(k->type).vec_dot_type), v_to_float(cpu::to_float(v->type)),
          f16_to_float(cpu::to_float(Type::F16)), q_convert(quantize_activations(vdt)),
          k_tile(gemm_tile_fn(k->type)), q_bytes(row_size(vdt, D)) {}

    // Queries [iq0, iq1) of head h (its K/V head hk) that see the rows of uspans (all without blocks).
    void prompt_chunk(const Scratch& sc, const RowBlocks* uspans, int64_t iq0, int64_t iq1, int64_t h, int64_t hk,
                      int64_t i3) const;
};

void FlashAttn::prompt_chunk(const Scratch& sc, const RowBlocks* uspans, int64_t iq0, int64_t iq1, int64_t h,
                             int64_t hk, int64_t i3) const {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    const int64_t nq = iq1 - iq0;
    for (int64_t iq = iq0; iq < iq1; ++iq) {
        const float* qrow = (const float*)q->row_ptr(iq, h, i3);
        char* dst = sc.qcs + (size_t)(iq - iq0) * q_bytes;
        if (vdt == Type::F32)
            std::memcpy(dst, qrow, (size_t)D * sizeof(float));
        else
            q_convert(qrow, dst, D);
    }
    // Raw scores of every query in the cells some query sees: mul_mat's tiles (each output is
    // k_dot's bits), query j's at scores + j * n_kv.
    for (int64_t s = 0; s < kv_spans(uspans); ++s) {
        int64_t i0, i1, next0, next1;
        kv_span(uspans, s, n_kv, &i0, &i1);
        while (s + 1 < kv_spans(uspans) && (kv_span(uspans, s + 1, n_kv, &next0, &next1), next0 == i1)) {
            i1 = next1;  // adjacent blocks: one tile
            ++s;
        }
        k_tile(D, sc.scores + i0, (size_t)n_kv, k->row_ptr(i0, hk, i3), k->nb[1], sc.qcs, q_bytes,
               (int)(i1 - i0), (int)nq);
    }
    // Each query's softmax weights in place, as for one query below.
    for (int64_t j = 0; j < nq; ++j) {
        float* row = sc.scores + j * n_kv;
        const char* mrow = mask ? mask->row_ptr(iq0 + j, h % mask->ne[2]) : nullptr;
        const RowBlocks rb = blocks ? kv_blocks_row(blocks, iq0 + j) : RowBlocks{};
        const RowBlocks* vis = blocks ? &rb : nullptr;
        float mx = neg_inf;
        for (int64_t s = 0; s < kv_spans(vis); ++s) {
            int64_t i0, i1;
            kv_span(vis, s, n_kv, &i0, &i1);
            // The span's mask as floats (sc.score: the one-query path's row, free here).
            const float* m = nullptr;
            if (mrow && mask->type == Type::F32) {
                m = (const float*)mrow + i0;
            } else if (mrow) {
                f16_to_float((const uint16_t*)mrow + i0, sc.score, i1 - i0);
                m = sc.score;
            }
            if (softcap == 0.0f) {
                // x * scale + mask, as soft_max forms it (vectorized), then masked cells -inf
                // whatever their raw score (a free cell's may be NaN).
                const float smx = scale_mask_max_row(row + i0, scale, m, row + i0, i1 - i0);
                mx = smx > mx ? smx : mx;
                if (m)
                    for (int64_t i = 0; i < i1 - i0; ++i)
                        if (m[i] == neg_inf) row[i0 + i] = neg_inf;
                continue;
            }
            for (int64_t i = i0; i < i1; ++i) {
                const float mv = m ? m[i - i0] : 0.0f;
                if (mv == neg_inf) {
                    row[i] = neg_inf;
                    continue;
                }
                float x = row[i] * scale;
                x = softcap * std::tanh(x);
                row[i] = x + mv;
                mx = row[i] > mx ? row[i] : mx;
            }
        }
        if (sinks) mx = sinks[h] > mx ? sinks[h] : mx;
        double sum = 0.0;
        for (int64_t s = 0; s < kv_spans(vis); ++s) {
            int64_t i0, i1;
            kv_span(vis, s, n_kv, &i0, &i1);
            sum = exp_row(row + i0, mx, row + i0, i1 - i0, sum);
        }
        if (sinks) sum += (double)std::exp(sinks[h] - mx);
        const float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f;
        for (int64_t s = 0; s < kv_spans(vis); ++s) {
            int64_t i0, i1;
            kv_span(vis, s, n_kv, &i0, &i1);
            for (int64_t i = i0; i < i1; ++i) row[i] *= inv;
        }
    }
    // The weighted sums, as mul_mat_t's chunks (weights rounded to f16 there for an f16 V).
    chunk_weighted_sums(v, hk, i3, sc.scores, (size_t)n_kv, (int)nq, blocks, iq0, uspans, sc.chunk, sc.accs);
    for (int64_t j = 0; j < nq; ++j)
        f64_to_f32_row(sc.accs + j * Dv, (float*)t->row_ptr(h, iq0 + j, i3), Dv);
}

}  // namespace

size_t flash_attn_work_size(const Tensor* t, int nth) {
    return scratch_bytes(t) * (size_t)nth + 64;
}

void op_flash_attn(const ComputeParams& p, Tensor* t) {
    const FlashAttn op(t);
    const Tensor* q = op.q;  // [D, n_q, H]
    const Tensor* k = op.k;  // [D, n_kv, Hkv]
    const Tensor* v = op.v;  // [Dv, n_kv, Hkv]
    const Tensor* mask = op.mask;
    const float* sinks = op.sinks;
    const float softcap = op.softcap, scale = op.scale;
    const int64_t D = op.D, n_q = q->ne[1], H = q->ne[2], n_kv = op.n_kv, Dv = op.Dv;
    const int64_t ratio = H / k->ne[2];
    const Type vdt = op.vdt;
    const auto k_dot = cpu::vec_dot(k->type);  // the kernel mul_mat uses: FA and the unfused path agree
    const auto v_to_float = op.v_to_float;
    const auto q_convert = op.q_convert;

    char* base = (char*)(((uintptr_t)p.wdata + 63) & ~uintptr_t(63)) + scratch_bytes(t) * (size_t)p.ith;
    const Scratch sc = carve(t, base, nullptr);
    float* vals = sc.vals;
    void* qc = sc.qc;
    float* score = sc.score;
    double* acc = sc.acc;
    const float neg_inf = -std::numeric_limits<float>::infinity();

    const Tensor* blocks = op.blocks;  // with it, only the cells each query sees are read
    std::vector<int32_t> chunk_list;
    const int64_t q_blocks = (n_q + kRows - 1) / kRows, planes = H * q->ne[3];
    for (int64_t c = p.counter->fetch_add(1); c < q_blocks * planes; c = p.counter->fetch_add(1)) {
        const int64_t qb = c % q_blocks, plane = c / q_blocks;
        const int64_t h = plane % H, i3 = plane / H, hk = h / ratio;
        const int64_t iq0 = qb * kRows, iq1 = std::min(n_q, iq0 + kRows);
        // Values of the cells some query of the chunk can see, as f32, converted once per chunk.
        const RowBlocks any = blocks ? kv_blocks_union(blocks, iq0, iq1, n_kv, chunk_list) : RowBlocks{};
        if (iq1 - iq0 > 1) {  // several queries (a prompt): the unfused path's steps over the chunk at once
            op.prompt_chunk(sc, blocks ? &any : nullptr, iq0, iq1, h, hk, i3);
            continue;
        }
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
