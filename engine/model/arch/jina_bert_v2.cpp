// jina-bert-v2: Jina Embeddings v2 (and the Jina v1 rerankers built on it). BERT's post-norm encoder layer
// without any position embedding: ALiBi biases each head's attention scores by slope_h * -|i - j|
// (HParams::max_alibi_bias 8, the masks of KvCache::apply_alibi). q/k/v with biases, optionally a
// LayerNorm of all query and of all key heads, optionally a second LayerNorm of the residual sum
// (attn_norm_2), and a GeGLU feed-forward: gelu(gate x) * (up x + b), or one up matrix holding the gated
// half then the linear half; down with a bias. Token-type row 0 is added to every token.
#include <cmath>
#include <string>

#include "engine/model/arch/arch.h"
#include "engine/model/arch/encoder_common.h"
#include "engine/model/graph_builder.h"
#include "engine/model/weight_loader.h"
#include "ggml/gguf.h"

namespace engine {

namespace {

using ggml::Tensor;

void read_hparams(const ggml::gguf::File& f, HParams& h) {
    read_encoder_hparams(f, h);
    h.max_alibi_bias = 8.0f;  // not in the file: the value the models were trained with (as llama.cpp)
}

void load_weights(WeightLoader& l) {
    Model& m = l.model;
    const HParams& h = l.hp;
    const int64_t E = h.n_embd, F = h.n_ff;
    load_encoder_inputs(l, /*types_required=*/false, /*positions=*/false);
    for (uint32_t il = 0; il < h.n_layer; ++il) {
        LayerWeights& w = m.layers[il];
        l.attention(il, w, /*qkv_biases=*/true);
        if (l.opt(il, w.q_norm, "attn_q_norm.weight", {E})) l.req(il, w.q_norm_b, "attn_q_norm.bias", {E});
        if (l.opt(il, w.k_norm, "attn_k_norm.weight", {E})) l.req(il, w.k_norm_b, "attn_k_norm.bias", {E});
        l.req(il, w.attn_out_norm, "attn_output_norm.weight", {E});
        l.req(il, w.attn_out_norm_b, "attn_output_norm.bias", {E});
        if (l.opt(il, w.attn_norm_2, "attn_norm_2.weight", {E}))
            l.req(il, w.attn_norm_2_b, "attn_norm_2.bias", {E});
        // Gate and up as two matrices, or one up matrix of 2 n_ff rows (gated half first).
        const bool gated = l.opt(il, w.w_gate, "ffn_gate.weight", {E, F});
        const int64_t up_rows = gated ? F : 2 * F;
        l.req(il, w.w_up, "ffn_up.weight", {E, up_rows});
        l.opt(il, w.b_up, "ffn_up.bias", {up_rows});
        l.req(il, w.w_down, "ffn_down.weight", {F, E});
        l.req(il, w.b_down, "ffn_down.bias", {E});
        l.req(il, w.layer_out_norm, "layer_output_norm.weight", {E});
        l.req(il, w.layer_out_norm_b, "layer_output_norm.bias", {E});
    }
    load_classification_head(l);
}

// down(gelu(gate x) * (up x + b)) + b_down, the gate from its own matrix or the first half of up's rows.
Tensor* ffn(GraphBuilder& g, const LayerWeights& w, Tensor* x) {
    Tensor* up = g.mm(w.w_up, x, w.b_up);
    Tensor* h;
    if (w.w_gate) {
        h = ggml::mul(g.ctx, ggml::gelu(g.ctx, g.mm(w.w_gate, x)), up);
    } else {
        const int64_t f = up->ne[0] / 2;
        Tensor* gate = ggml::view_2d(g.ctx, up, f, up->ne[1], up->nb[1], 0);
        Tensor* lin = ggml::view_2d(g.ctx, up, f, up->ne[1], up->nb[1], f * sizeof(float));
        h = ggml::mul(g.ctx, ggml::gelu(g.ctx, ggml::cont(g.ctx, gate)), lin);
    }
    return g.mm(w.w_down, h, w.b_down);
}

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const Model& m = g.model;
    const float kq_scale = 1.0f / std::sqrt((float)hp.n_embd_head_k);
    const int64_t n = g.shape.n_tokens, hd = hp.n_embd_head_k;
    Tensor* x = encoder_input(g);
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = m.layers[il];
        // x = LayerNorm(x + Wo attn(LN(Wq x), LN(Wk x), Wv x)), ALiBi in the mask
        Tensor* q = g.mm(w.wq, x, w.bq);
        Tensor* k = g.mm(w.wk, x, w.bk);
        if (w.q_norm) q = g.layer_norm(q, w.q_norm, w.q_norm_b);
        if (w.k_norm) k = g.layer_norm(k, w.k_norm, w.k_norm_b);
        q = ggml::reshape_3d(g.ctx, q, hd, hp.n_head, n);
        k = ggml::reshape_3d(g.ctx, k, hd, hp.n_head_kv, n);
        Tensor* cur = g.mm(w.wo, g.attention(il, q, k, g.mm(w.wv, x, w.bv), kq_scale), w.bo);
        Tensor* res = g.outputs_only(x, il);
        cur = g.layer_norm(ggml::add(g.ctx, g.outputs_only(cur, il), res), w.attn_out_norm, w.attn_out_norm_b);
        if (w.attn_norm_2) cur = g.layer_norm(ggml::add(g.ctx, cur, res), w.attn_norm_2, w.attn_norm_2_b);
        // x = LayerNorm(x + ffn(x))
        x = g.layer_norm(ggml::add(g.ctx, ffn(g, w, cur), cur), w.layer_out_norm, w.layer_out_norm_b);
    }
    return x;
}

}  // namespace

extern const ArchRow kArchJinaBertV2{"jina-bert-v2", ggml::kRopeNormal, read_hparams, load_weights, build, false,
                                     Use::Never /* experts */, Use::Never /* sliding window */};

}  // namespace engine
