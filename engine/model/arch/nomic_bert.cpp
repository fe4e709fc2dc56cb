// nomic-bert: Nomic Embed (nomic-embed-text v1/v1.5). BERT's post-norm encoder layer with RoPE on the two
// halves of each head (NEOX) instead of position embeddings, one fused q/k/v product without biases, and a
// SwiGLU feed-forward (down(silu(gate x) * up x)) instead of GELU. Token-type row 0 is added to every
// token when the file has token types. No output matrix: the graph returns the final hidden states.
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

void read_hparams(const ggml::gguf::File& f, HParams& h) {
    read_encoder_hparams(f, h);
    // nomic-bert-moe's expert layers are another architecture name; a plain nomic-bert file that asks for
    // them is not a model we can run correctly.
    if (read_u32(f, h, "moe_every_n_layers", 0) != 0)
        throw std::runtime_error("model metadata: nomic-bert with expert layers (moe_every_n_layers) is not "
                                 "supported");
}

void load_weights(WeightLoader& l) {
    Model& m = l.model;
    const HParams& h = l.hp;
    const int64_t E = h.n_embd, F = h.n_ff;
    load_encoder_inputs(l, /*types_required=*/false, /*positions=*/false);  // token types optional, as in llama.cpp
    for (uint32_t il = 0; il < h.n_layer; ++il) {
        LayerWeights& w = m.layers[il];
        l.attention(il, w);
        l.req(il, w.attn_out_norm, "attn_output_norm.weight", {E});
        l.req(il, w.attn_out_norm_b, "attn_output_norm.bias", {E});
        l.req(il, w.w_up, "ffn_up.weight", {E, F});
        l.req(il, w.w_gate, "ffn_gate.weight", {E, F});
        l.req(il, w.w_down, "ffn_down.weight", {F, E});
        l.req(il, w.layer_out_norm, "layer_output_norm.weight", {E});
        l.req(il, w.layer_out_norm_b, "layer_output_norm.bias", {E});
    }
}

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const Model& m = g.model;
    const float kq_scale = 1.0f / std::sqrt((float)hp.n_embd_head_k);
    Tensor* x = encoder_input(g);
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = m.layers[il];
        // x = LayerNorm(x + Wo attn(rope(Wq x), rope(Wk x), Wv x))
        auto [q, k, v] = g.qkv(w, x);
        Tensor* cur = g.mm(w.wo, g.attention(il, g.rope(q, il), g.rope(k, il), v, kq_scale), w.bo);
        x = g.layer_norm(g.residual(cur, x, il), w.attn_out_norm, w.attn_out_norm_b);
        // x = LayerNorm(x + down(silu(gate x) * up x))
        x = g.layer_norm(ggml::add(g.ctx, g.ffn_swiglu(w, x), x), w.layer_out_norm, w.layer_out_norm_b);
    }
    return x;
}

}  // namespace

extern const ArchRow kArchNomicBert{"nomic-bert", ggml::kRopeNeox, read_hparams, load_weights, build, false,
                                    Use::Never /* experts */, Use::Never /* sliding window */};

}  // namespace engine
