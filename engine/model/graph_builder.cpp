#include "engine/model/graph_builder.h"

namespace engine {

using ggml::Tensor;

GraphBuilder::GraphBuilder(ggml::Context& c, const Model& m, const KvCache& cache, const GraphShape& s)
    : ctx(c), model(m), hp(m.hparams()), kv(cache), shape(s) {
    const int64_t n = s.n_tokens;
    in.tokens = ctx.new_tensor_1d(ggml::Type::I32, n);
    in.pos = ctx.new_tensor_1d(ggml::Type::I32, n);
    in.kv_cells = ctx.new_tensor_1d(ggml::Type::I32, n);
    in.mask = ctx.new_tensor_2d(ggml::Type::F32, s.n_kv, n);
    if (hp.n_swa > 0) in.mask_swa = ctx.new_tensor_2d(ggml::Type::F32, s.n_kv, n);
    in.out_ids = ctx.new_tensor_1d(ggml::Type::I32, s.n_outputs);
    for (Tensor* t : {in.tokens, in.pos, in.kv_cells, in.mask, in.mask_swa, in.out_ids})
        if (t) t->flags |= ggml::kFlagInput;
}

Tensor* GraphBuilder::embed() const { return ggml::get_rows(ctx, model.tok_embd, in.tokens); }

Tensor* GraphBuilder::mm(Tensor* w, Tensor* x, Tensor* b) const {
    Tensor* y = ggml::mul_mat(ctx, w, x);
    return b ? ggml::add(ctx, y, b) : y;
}

Tensor* GraphBuilder::rms_norm(Tensor* x, Tensor* w) const {
    Tensor* y = ggml::rms_norm(ctx, x, hp.rms_eps);
    return w ? ggml::mul(ctx, y, w) : y;
}

GraphBuilder::Qkv GraphBuilder::qkv(const LayerWeights& w, Tensor* x) const {
    const int64_t n = x->ne[1], hd = hp.n_embd_head_k, hdv = hp.n_embd_head_v;
    const int64_t nq = hd * hp.n_head, nk = hd * hp.n_head_kv, nv = hdv * hp.n_head_kv;
    if (w.wqkv) {
        // One product, then views of its q, k and v rows.
        Tensor* qkv = mm(w.wqkv, x, w.bqkv);
        const size_t f = sizeof(float);
        Tensor* q = ggml::view_3d(ctx, qkv, hd, hp.n_head, n, hd * f, qkv->nb[1], 0);
        Tensor* k = ggml::view_3d(ctx, qkv, hd, hp.n_head_kv, n, hd * f, qkv->nb[1], nq * f);
        Tensor* v = ggml::view_2d(ctx, qkv, nv, n, qkv->nb[1], (nq + nk) * f);
        return {q, k, v};
    }
    Tensor* q = ggml::reshape_3d(ctx, mm(w.wq, x, w.bq), hd, hp.n_head, n);
    Tensor* k = ggml::reshape_3d(ctx, mm(w.wk, x, w.bk), hd, hp.n_head_kv, n);
    Tensor* v = mm(w.wv, x, w.bv);
    return {q, k, v};
}

Tensor* rope_layer(ggml::Context& ctx, const Model& m, Tensor* x, Tensor* pos, uint32_t il, bool long_rope,
                   bool magnitude) {
    const HParams& hp = m.hparams();
    const bool swa = hp.is_swa(il);
    (void)long_rope;
    (void)magnitude;
    return ggml::rope(ctx, x, pos, (int)hp.n_rot, hp.rope_mode, swa ? hp.rope_freq_base_swa : hp.rope_freq_base,
                      swa ? hp.rope_freq_scale_swa : hp.rope_freq_scale);
}

Tensor* GraphBuilder::rope(Tensor* x, uint32_t il) const {
    return rope_layer(ctx, model, x, in.pos, il, shape.long_rope);
}

Tensor* GraphBuilder::attention(uint32_t il, Tensor* q, Tensor* k, Tensor* v, float kq_scale) const {
    const int64_t n = q->ne[2], hd = hp.n_embd_head_k, hdv = hp.n_embd_head_v, n_head_kv = hp.n_head_kv;
    Tensor* mask = hp.is_swa(il) ? in.mask_swa : in.mask;
    Tensor* k_cache = ggml::set_rows(ctx, kv.k(il), ggml::reshape_2d(ctx, k, hd * n_head_kv, n), in.kv_cells);
    Tensor* v_cache = ggml::set_rows(ctx, kv.v(il), v, in.kv_cells);
    const ggml::Type tk = k_cache->type, tv = v_cache->type;
    Tensor* K = ggml::view_3d(ctx, k_cache, hd, shape.n_kv, n_head_kv, ggml::row_size(tk, hd * n_head_kv),
                              ggml::row_size(tk, hd), 0);
    Tensor* V = ggml::view_3d(ctx, v_cache, hdv, shape.n_kv, n_head_kv, ggml::row_size(tv, hdv * n_head_kv),
                              ggml::row_size(tv, hdv), 0);
    Tensor* Q = ggml::permute(ctx, q, 0, 2, 1, 3);  // [hd, n, n_head]

    Tensor* attn;
    if (shape.flash_attn) {
        attn = ggml::flash_attn(ctx, Q, K, V, mask, kq_scale);  // [hdv, n_head, n]
    } else {
        Tensor* kq = ggml::soft_max(ctx, ggml::mul_mat(ctx, K, Q), mask, kq_scale);  // [n_kv, n, n_head]
        Tensor* kqv = ggml::mul_mat_t(ctx, V, kq);                                    // [hdv, n, n_head]
        attn = ggml::cont(ctx, ggml::permute(ctx, kqv, 0, 2, 1, 3));                 // [hdv, n_head, n]
    }
    return ggml::reshape_2d(ctx, attn, hdv * hp.n_head, n);
}

Tensor* GraphBuilder::ffn_swiglu(const LayerWeights& w, Tensor* x) const {
    Tensor* h;
    if (w.w_gate_up) {
        Tensor* gu = mm(w.w_gate_up, x);  // [2 n_ff, n]: gate rows, then up rows
        const int64_t f = gu->ne[0] / 2;
        h = ggml::swiglu(ctx, ggml::view_2d(ctx, gu, f, gu->ne[1], gu->nb[1], 0),
                         ggml::view_2d(ctx, gu, f, gu->ne[1], gu->nb[1], f * sizeof(float)));
    } else {
        h = ggml::swiglu(ctx, mm(w.w_gate, x, w.b_gate), mm(w.w_up, x, w.b_up));
    }
    return mm(w.w_down, h, w.b_down);
}

Tensor* GraphBuilder::outputs_only(Tensor* t, uint32_t il) const {
    if (il + 1 != hp.n_layer || shape.n_outputs == shape.n_tokens) return t;
    return ggml::get_rows(ctx, t, in.out_ids);
}

Tensor* GraphBuilder::logits(Tensor* x) const { return mm(model.output, x, model.output_b); }

}  // namespace engine
