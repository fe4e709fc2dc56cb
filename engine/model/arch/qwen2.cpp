// qwen2: Qwen 1.5 / Qwen 2 / Qwen 2.5. The llama layer with biases on the q, k and v projections and RoPE
// on the two halves of each head (NEOX).
#include <cmath>

#include "engine/model/arch/arch.h"
#include "engine/model/graph_builder.h"
#include "engine/model/weight_loader.h"

namespace engine {

namespace {

using ggml::Tensor;

void read_hparams(const ggml::gguf::File&, HParams&) {}

void load_weights(WeightLoader& l) {
    Model& m = l.model;
    const HParams& h = l.hp;
    const int64_t E = h.n_embd, V = h.n_vocab, F = h.n_ff;
    l.input(m.tok_embd, "token_embd.weight", {E, V});
    l.output(m.output_norm, "output_norm.weight", {E});
    l.output_or_tied(m.output, {E, V});
    for (uint32_t il = 0; il < h.n_layer; ++il) {
        LayerWeights& w = m.layers[il];
        l.req(il, w.attn_norm, "attn_norm.weight", {E});
        l.attention(il, w, true);
        l.req(il, w.ffn_norm, "ffn_norm.weight", {E});
        l.req(il, w.w_gate, "ffn_gate.weight", {E, F});
        l.req(il, w.w_up, "ffn_up.weight", {E, F});
        l.req(il, w.w_down, "ffn_down.weight", {F, E});
    }
}

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const float kq_scale = 1.0f / std::sqrt((float)hp.n_embd_head_k);
    Tensor* x = g.embed();
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = g.model.layers[il];

        // attention: x + Wo attn(rope(Wq h + bq), rope(Wk h + bk), Wv h + bv), h = rmsnorm(x)
        auto [q, k, v] = g.qkv(w, g.rms_norm(x, w.attn_norm));
        Tensor* cur = g.mm(w.wo, g.attention(il, g.rope(q, il), g.rope(k, il), v, kq_scale));
        x = g.residual(cur, x, il);

        // feed-forward: x + swiglu(rmsnorm(x))
        x = g.layer_out(ggml::add(g.ctx, g.ffn_swiglu(w, g.rms_norm(x, w.ffn_norm)), x), il);
    }
    return g.logits(g.rms_norm(x, g.model.output_norm));
}

}  // namespace

extern const ArchRow kArchQwen2{"qwen2", ggml::kRopeNeox, read_hparams, load_weights, build, true,
                                Use::Never /* experts */, Use::Never /* sliding window */};

}  // namespace engine
