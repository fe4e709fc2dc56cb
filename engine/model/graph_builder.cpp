#include "engine/model/graph_builder.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/model/control_vector.h"
#include "engine/model/lora.h"

namespace engine {

using ggml::Tensor;

GraphBuilder::GraphBuilder(ggml::Context& c, const Model& m, const KvCache& cache, const GraphShape& s)
    : ctx(c), model(m), hp(m.hparams()), kv(cache), shape(s) {
    const int64_t n = s.n_tokens;
    in.tokens = ctx.new_tensor_1d(ggml::Type::I32, n);
    in.pos = ctx.new_tensor_1d(ggml::Type::I32, n);
    in.kv_cells = ctx.new_tensor_1d(ggml::Type::I32, n);
    // ALiBi gives every head its own biases: a plane per head.
    in.mask = hp.max_alibi_bias > 0.0f ? ctx.new_tensor_3d(ggml::Type::F32, s.n_kv, n, hp.n_head)
                                       : ctx.new_tensor_2d(ggml::Type::F32, s.n_kv, n);
    if (hp.n_swa > 0) in.mask_swa = ctx.new_tensor_2d(ggml::Type::F32, s.n_kv, n);
    in.out_ids = ctx.new_tensor_1d(ggml::Type::I32, s.n_outputs);
    if (s.n_logit_rows > 0 && s.n_logit_rows < s.n_outputs) {
        in.logit_sel = ctx.new_tensor_1d(ggml::Type::I32, s.n_logit_rows);
        in.logit_sel->flags |= ggml::kFlagInput;
    }
    in.kv_blocks = ctx.new_tensor_2d(ggml::Type::I32, 1 + (s.n_kv + ggml::kKvBlock - 1) / ggml::kKvBlock, n);
    for (Tensor* t : {in.tokens, in.pos, in.kv_cells, in.mask, in.mask_swa, in.out_ids, in.kv_blocks})
        if (t) t->flags |= ggml::kFlagInput;
}

Tensor* GraphBuilder::embed() const { return ggml::get_rows(ctx, model.tok_embd, in.tokens); }

Tensor* GraphBuilder::embed_scaled() const { return ggml::scale(ctx, embed(), std::sqrt((float)hp.n_embd)); }

Tensor* GraphBuilder::mm(Tensor* w, Tensor* x, Tensor* b) const {
    Tensor* y = ggml::mul_mat(ctx, w, x);
    for (const LoraInput& l : lora) {
        const LoraAdapter::Pair* p = l.adapter->find(w->name);
        if (!p) continue;
        // x is [in, n_tokens], or [in, n_outputs] after the last layer dropped the other tokens.
        Tensor* s = x->ne[1] == (int64_t)shape.n_tokens ? l.scale : x->ne[1] == (int64_t)shape.n_outputs ? l.scale_out : nullptr;
        if (!s || x->ne[2] != 1 || x->ne[3] != 1)
            throw std::logic_error(std::string("LoRA: the product of ") + w->name + " has no per-token scale");
        Tensor* d = ggml::mul_mat(ctx, p->b, ggml::mul_mat(ctx, p->a, x));
        if (p->factor != 1.0f) d = ggml::scale(ctx, d, p->factor);
        y = ggml::add(ctx, y, ggml::mul(ctx, d, s));
    }
    return b ? ggml::add(ctx, y, b) : y;
}

Tensor* GraphBuilder::layer_out(Tensor* x, uint32_t il) const {
    Tensor* d = cvec ? cvec->layer(il) : nullptr;
    return d ? ggml::add(ctx, x, d) : x;
}

LoraInput& GraphBuilder::add_lora(const LoraAdapter* adapter) {
    LoraInput l{adapter, ctx.new_tensor_2d(ggml::Type::F32, 1, shape.n_tokens),
                ctx.new_tensor_2d(ggml::Type::F32, 1, shape.n_outputs)};
    l.scale->flags |= ggml::kFlagInput;
    l.scale_out->flags |= ggml::kFlagInput;
    lora.push_back(l);
    return lora.back();
}

Tensor* GraphBuilder::rms_norm(Tensor* x, Tensor* w) const {
    Tensor* y = ggml::rms_norm(ctx, x, hp.rms_eps);
    return w ? ggml::mul(ctx, y, w) : y;
}

Tensor* GraphBuilder::layer_norm(Tensor* x, Tensor* w, Tensor* b) const {
    Tensor* y = ggml::norm(ctx, x, hp.norm_eps);
    if (w) y = ggml::mul(ctx, y, w);
    return b ? ggml::add(ctx, y, b) : y;
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
    const LayerWeights& w = m.layers[il];
    const bool swa = hp.is_swa(il);
    ggml::RopeParams p;
    p.n_dims = (int)hp.n_rot;
    p.mode = hp.rope_mode;
    p.n_ctx_orig = (int)hp.n_ctx_orig;
    p.freq_base = swa ? hp.rope_freq_base_swa : hp.rope_freq_base;
    p.freq_scale = swa ? hp.rope_freq_scale_swa : hp.rope_freq_scale;
    p.ext_factor = hp.yarn_ext_factor;
    p.attn_factor = hp.yarn_attn_factor;
    p.beta_fast = hp.yarn_beta_fast;
    p.beta_slow = hp.yarn_beta_slow;
    // A K-shift turns keys that already carry the magnitude factor: a pure rotation (the kernel multiplies
    // by 1 + 0.1 ln(1 / freq_scale) whenever YaRN mixes, which the attention factor then cancels).
    if (!magnitude)
        p.attn_factor = p.ext_factor != 0.0f ? 1.0f / (1.0f + 0.1f * std::log(1.0f / p.freq_scale)) : 1.0f;
    Tensor* factors = w.rope_freqs;
    if (w.rope_long || w.rope_short) factors = long_rope ? w.rope_long : w.rope_short;
    return ggml::rope_ext(ctx, x, pos, factors, p);
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

    // A cache in host memory means attention runs on the CPU, which then visits only the blocks of the
    // cache that each token's sequences occupy (the same bits as visiting every cell).
    const bool host_cache = kv.k(il)->buffer && kv.k(il)->buffer->backend->is_host() && kv.v(il)->buffer &&
                            kv.v(il)->buffer->backend->is_host();
    auto blocks = [&](Tensor* op) { return host_cache ? ggml::with_kv_blocks(op, in.kv_blocks) : op; };
    Tensor* attn;
    Tensor* sinks = model.layers[il].attn_sinks;
    if (shape.flash_attn) {
        attn = blocks(
            ggml::flash_attn(ctx, Q, K, V, mask, kq_scale, hp.attn_softcap, sinks));  // [hdv, n_head, n]
    } else {
        Tensor* kq = blocks(ggml::mul_mat(ctx, K, Q));  // [n_kv, n, n_head]
        if (hp.attn_softcap > 0.0f) kq = ggml::softcap(ctx, kq, hp.attn_softcap);
        kq = blocks(ggml::soft_max(ctx, kq, mask, kq_scale, sinks));
        Tensor* kqv = blocks(ggml::mul_mat_t(ctx, V, kq));                            // [hdv, n, n_head]
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

Tensor* GraphBuilder::mm_experts(Tensor* as, Tensor* x, Tensor* ids) const {
    return ggml::mul_mat_id(ctx, as, x, ids);
}

Tensor* GraphBuilder::ffn_moe(const LayerWeights& w, Tensor* x, MoeWeights weighting,
                              MoeActivation act) const {
    const int64_t n = x->ne[1], n_expert = hp.n_expert, k = hp.n_expert_used;
    Tensor* logits = mm(w.router, x, w.router_b);  // [n_expert, n]
    // The choice is the same from logits as from probabilities (softmax keeps the order).
    Tensor* probs =
        weighting == MoeWeights::SoftmaxOfChosen ? logits : ggml::soft_max(ctx, logits, nullptr, 1.0f);
    Tensor* selected = ggml::top_k(ctx, probs, (int)k);  // I32 [k, n]
    Tensor* weights =
        ggml::get_rows(ctx, ggml::reshape_3d(ctx, probs, 1, n_expert, n), selected);  // [1, k, n]
    if (weighting != MoeWeights::Softmax) {
        Tensor* wk = ggml::reshape_2d(ctx, weights, k, n);
        // The selected probabilities sum to at least 1 / n_expert: no guard against zero needed.
        wk = weighting == MoeWeights::SoftmaxNormalized ? ggml::div(ctx, wk, ggml::sum_rows(ctx, wk))
                                                        : ggml::soft_max(ctx, wk, nullptr, 1.0f);
        weights = ggml::reshape_3d(ctx, wk, 1, k, n);
    }
    // An expert product plus, where the layer has them, each chosen expert's bias row (llama.cpp's add_id).
    Tensor* ids = ggml::reshape_1d(ctx, selected, k * n);
    auto experts_mm = [&](Tensor* as, Tensor* bias, Tensor* in) {
        Tensor* y = mm_experts(as, in, selected);  // [rows, k, n]
        if (!bias) return y;
        return ggml::add(ctx, y, ggml::reshape_3d(ctx, ggml::get_rows(ctx, bias, ids), y->ne[0], k, n));
    };
    Tensor* xe = ggml::reshape_3d(ctx, x, x->ne[0], 1, n);
    Tensor* gate = experts_mm(w.w_gate_exps, w.b_gate_exps, xe);
    Tensor* up = experts_mm(w.w_up_exps, w.b_up_exps, xe);
    Tensor* h = act == MoeActivation::SwiGluOai ? ggml::swiglu_oai(ctx, gate, up, 1.702f, 7.0f)
                                                : ggml::swiglu(ctx, gate, up);
    Tensor* experts = ggml::mul(ctx, experts_mm(w.w_down_exps, w.b_down_exps, h), weights);  // [n_embd, k, n]
    Tensor* out = nullptr;
    for (int64_t e = 0; e < k; ++e) {  // in selection order, as llama.cpp adds them
        Tensor* v =
            ggml::view_2d(ctx, experts, experts->ne[0], n, experts->nb[2], (size_t)e * experts->nb[1]);
        out = out ? ggml::add(ctx, out, v) : v;
    }
    return k == 1 ? ggml::cont(ctx, out) : out;
}

Tensor* GraphBuilder::ffn_shared_expert(const LayerWeights& w, Tensor* x) const {
    Tensor* h = ggml::swiglu(ctx, mm(w.w_gate_shexp, x), mm(w.w_up_shexp, x));
    Tensor* y = mm(w.w_down_shexp, h);
    // y sigmoid(g) = (y + y tanh(g / 2)) / 2, g = shexp_gate . x [1, n]: defined where g is 0 (a gate of
    // zeros), where llama.cpp's silu(g) / g is 0 / 0 and turns every later value into NaN.
    Tensor* t = ggml::tanh(ctx, ggml::scale(ctx, mm(w.shexp_gate, x), 0.5f));
    return ggml::scale(ctx, ggml::add(ctx, y, ggml::mul(ctx, y, t)), 0.5f);
}

Tensor* GraphBuilder::ffn_geglu(const LayerWeights& w, Tensor* x) const {
    Tensor* h = ggml::mul(ctx, ggml::gelu(ctx, mm(w.w_gate, x, w.b_gate)), mm(w.w_up, x, w.b_up));
    return mm(w.w_down, h, w.b_down);
}

Tensor* GraphBuilder::outputs_only(Tensor* t, uint32_t il) const {
    if (il + 1 != hp.n_layer || shape.n_outputs == shape.n_tokens) return t;
    return ggml::get_rows(ctx, t, in.out_ids);
}

Tensor* GraphBuilder::residual(Tensor* sub, Tensor* x, uint32_t il) const {
    return ggml::add(ctx, outputs_only(sub, il), outputs_only(x, il));
}

Tensor* GraphBuilder::logits(Tensor* x) const {
    hidden = x;
    if (shape.n_logit_rows == 0) return x;
    if (in.logit_sel) x = ggml::get_rows(ctx, x, in.logit_sel);
    return mm(model.output, x, model.output_b);
}

}  // namespace engine
