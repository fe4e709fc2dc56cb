// phi3: Phi-3 / Phi-3.5 / Phi-4-mini. One fused q/k/v projection (attn_qkv) and one fused gate/up
// projection (ffn_up holds the gate rows, then the up rows), RoPE on the halves of each head (NEOX) with
// LongRoPE's factors where the file has them (rope_factors_short, and rope_factors_long once the context
// exceeds the original one), queries scaled by 1/sqrt(head) before attention. The files' sliding window
// is not applied (as llama.cpp, which found the converted values unreliable).
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
    const int64_t Q = (int64_t)h.n_embd_head_k * h.n_head, K = h.n_embd_k_gqa(), Vg = h.n_embd_v_gqa();
    l.input(m.tok_embd, "token_embd.weight", {E, V});
    l.output(m.output_norm, "output_norm.weight", {E});
    l.output_or_tied(m.output, {E, V});
    l.output(m.output_b, "output.bias", {V}, false);
    for (uint32_t il = 0; il < h.n_layer; ++il) {
        LayerWeights& w = m.layers[il];
        l.req(il, w.attn_norm, "attn_norm.weight", {E});
        l.req(il, w.wqkv, "attn_qkv.weight", {E, Q + K + Vg});
        l.req(il, w.wo, "attn_output.weight", {(int64_t)h.n_embd_head_v * h.n_head, E});
        l.req(il, w.ffn_norm, "ffn_norm.weight", {E});
        l.req(il, w.w_gate_up, "ffn_up.weight", {E, 2 * F});
        l.req(il, w.w_down, "ffn_down.weight", {F, E});
        l.shared(il, w.rope_long, "rope_factors_long.weight", {h.n_rot / 2});
        l.shared(il, w.rope_short, "rope_factors_short.weight", {h.n_rot / 2});
    }
}

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const float q_scale = 1.0f / std::sqrt((float)hp.n_embd_head_k);
    Tensor* x = g.embed();
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = g.model.layers[il];

        // attention: x + Wo attn(rope(q) / sqrt(head), rope(k), v), [q k v] = Wqkv rmsnorm(x)
        auto [q, k, v] = g.qkv(w, g.rms_norm(x, w.attn_norm));
        q = ggml::scale(g.ctx, g.rope(q, il), q_scale);
        Tensor* cur = g.mm(w.wo, g.attention(il, q, g.rope(k, il), v, 1.0f));
        x = g.residual(cur, x, il);

        // feed-forward: x + Wdown (silu(gate) * up), [gate up] = Wup rmsnorm(x)
        x = g.layer_out(ggml::add(g.ctx, g.ffn_swiglu(w, g.rms_norm(x, w.ffn_norm)), x), il);
    }
    return g.logits(g.rms_norm(x, g.model.output_norm));
}

}  // namespace

extern const ArchRow kArchPhi3{"phi3", ggml::kRopeNeox, read_hparams, load_weights, build, true,
                               Use::Never /* experts */, Use::Never /* sliding window */};

}  // namespace engine
