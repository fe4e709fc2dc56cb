// bert: BERT-style encoders (bge, all-MiniLM, e5, ...). Post-norm: the input is token + position + token-type
// embeddings, LayerNorm; each layer adds attention (q/k/v/o with biases, no RoPE, every token of a sequence
// sees every other: non-causal) to its input and LayerNorms the sum, then the same with a GELU feed-forward
// (up, gelu, down, biases). No output matrix: the graph returns the final hidden states, which the caller
// pools (engine/model/embeddings.*).
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/model/arch/arch.h"
#include "engine/model/arch/encoder_hparams.h"
#include "engine/model/graph_builder.h"
#include "engine/model/weight_loader.h"
#include "ggml/gguf.h"

namespace engine {

void read_encoder_hparams(const ggml::gguf::File& f, HParams& h) {
    h.pooling_type = (int)read_u32(f, h, "pooling_type", 0);
    if (h.pooling_type > 4)
        throw std::runtime_error("model metadata: unknown pooling_type " + std::to_string(h.pooling_type));
    h.n_token_types = read_u32(f, h, "token_type_count", 2);
    if (h.n_token_types == 0 || h.n_token_types > 1024)
        throw std::runtime_error("model metadata: implausible token_type_count");
    h.causal = false;  // an encoder: the attention.causal key only confirms it (llama.cpp ignores it too)
}

namespace {

using ggml::Tensor;

void load_weights(WeightLoader& l) {
    Model& m = l.model;
    const HParams& h = l.hp;
    const int64_t E = h.n_embd, V = h.n_vocab, F = h.n_ff;
    l.input(m.tok_embd, "token_embd.weight", {E, V});
    l.input(m.tok_types, "token_types.weight", {E, h.n_token_types});
    l.input(m.pos_embd, "position_embd.weight", {E, h.n_ctx_train});
    l.input(m.tok_norm, "token_embd_norm.weight", {E});
    l.input(m.tok_norm_b, "token_embd_norm.bias", {E});
    for (uint32_t il = 0; il < h.n_layer; ++il) {
        LayerWeights& w = m.layers[il];
        l.attention(il, w);
        l.req(il, w.attn_out_norm, "attn_output_norm.weight", {E});
        l.req(il, w.attn_out_norm_b, "attn_output_norm.bias", {E});
        l.req(il, w.w_up, "ffn_up.weight", {E, F});
        l.opt(il, w.b_up, "ffn_up.bias", {F});
        l.req(il, w.w_down, "ffn_down.weight", {F, E});
        l.opt(il, w.b_down, "ffn_down.bias", {E});
        l.req(il, w.layer_out_norm, "layer_output_norm.weight", {E});
        l.req(il, w.layer_out_norm_b, "layer_output_norm.bias", {E});
    }
    // A reranker's classification head (rank pooling), when the file has one.
    const ggml::gguf::File& f = m.gguf();
    if (const ggml::gguf::TensorInfo* t = f.find_tensor("cls.output.weight")) {
        const int64_t n_out = t->ne[1];
        l.input(m.cls_out, "cls.output.weight", {E, n_out});
        if (f.find_tensor("cls.output.bias")) l.input(m.cls_out_b, "cls.output.bias", {n_out});
        if (f.find_tensor("cls.weight")) {
            l.input(m.cls, "cls.weight", {E, E});
            if (f.find_tensor("cls.bias")) l.input(m.cls_b, "cls.bias", {E});
        }
    }
}

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const Model& m = g.model;
    const float kq_scale = 1.0f / std::sqrt((float)hp.n_embd_head_k);
    // Every token has type 0 (single-segment inputs): row 0 of token_types, broadcast.
    Tensor* type0 = ggml::view_1d(g.ctx, m.tok_types, hp.n_embd, 0);
    Tensor* x =
        ggml::add(g.ctx, ggml::add(g.ctx, g.embed(), type0), ggml::get_rows(g.ctx, m.pos_embd, g.in.pos));
    x = g.layer_norm(x, m.tok_norm, m.tok_norm_b);
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = m.layers[il];
        // x = LayerNorm(x + Wo attn(Wq x, Wk x, Wv x))
        auto [q, k, v] = g.qkv(w, x);
        Tensor* cur = g.mm(w.wo, g.attention(il, q, k, v, kq_scale), w.bo);
        x = g.layer_norm(ggml::add(g.ctx, g.outputs_only(cur, il), g.outputs_only(x, il)), w.attn_out_norm,
                         w.attn_out_norm_b);
        // x = LayerNorm(x + down(gelu(up x)))
        Tensor* ff = g.mm(w.w_down, ggml::gelu(g.ctx, g.mm(w.w_up, x, w.b_up)), w.b_down);
        x = g.layer_norm(ggml::add(g.ctx, ff, x), w.layer_out_norm, w.layer_out_norm_b);
    }
    return x;
}

}  // namespace

extern const ArchRow kArchBert{"bert", ggml::kRopeNormal, read_encoder_hparams, load_weights, build, false,
                               Use::Never /* experts */, Use::Never /* sliding window */};

}  // namespace engine
