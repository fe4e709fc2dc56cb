// bert: BERT-style encoders (bge, all-MiniLM, e5, ...). Post-norm: the input is token + position + token-type
// embeddings, LayerNorm; each layer adds attention (q/k/v/o with biases, no RoPE, every token of a sequence
// sees every other: non-causal) to its input and LayerNorms the sum, then the same with a GELU feed-forward
// (up, gelu, down, biases). No output matrix: the graph returns the final hidden states, which the caller
// pools (engine/model/embeddings.*).
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/model/arch/arch.h"
#include "engine/model/arch/encoder_common.h"
#include "engine/model/graph_builder.h"
#include "engine/model/weight_loader.h"
#include "ggml/gguf.h"

namespace engine {

namespace {

using ggml::Tensor;

void load_weights(WeightLoader& l) {
    Model& m = l.model;
    const HParams& h = l.hp;
    const int64_t E = h.n_embd, F = h.n_ff;
    load_encoder_inputs(l, /*types_required=*/true, /*positions=*/true);
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
    load_classification_head(l);
}

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const Model& m = g.model;
    const float kq_scale = 1.0f / std::sqrt((float)hp.n_embd_head_k);
    Tensor* x = encoder_input(g);
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = m.layers[il];
        // x = LayerNorm(x + Wo attn(Wq x, Wk x, Wv x))
        auto [q, k, v] = g.qkv(w, x);
        Tensor* cur = g.mm(w.wo, g.attention(il, q, k, v, kq_scale), w.bo);
        x = g.layer_norm(g.residual(cur, x, il), w.attn_out_norm, w.attn_out_norm_b);
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
