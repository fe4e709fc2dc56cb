// qwen2moe: Qwen 1.5-MoE / Qwen 2-MoE. Qwen 2's attention (q/k/v biases, NEOX RoPE) and, in place of the
// feed-forward, expert_used_count of expert_count SwiGLU experts of expert_feed_forward_length rows
// (default feed_forward_length / expert_used_count), chosen per token by softmax routing and weighted by
// their probabilities as they are (not renormalized over the chosen ones), plus a shared expert of
// expert_shared_feed_forward_length rows (default feed_forward_length) that every token runs, scaled by
// a sigmoid gate of its own (ffn_gate_inp_shexp).
#include <cmath>
#include <stdexcept>

#include "engine/model/arch/arch.h"
#include "engine/model/graph_builder.h"
#include "engine/model/weight_loader.h"

namespace engine {

namespace {

using ggml::Tensor;

// expert_count and expert_used_count are positive here (the row requires experts).
void read_hparams(const ggml::gguf::File&, HParams& h) {
    if (h.n_ff_exp == 0) h.n_ff_exp = h.n_ff / h.n_expert_used;
    if (h.n_ff_shexp == 0) h.n_ff_shexp = h.n_ff;
    if (h.n_ff_exp == 0 || h.n_ff_shexp == 0)
        throw std::runtime_error("model metadata: qwen2moe needs the expert feed-forward lengths");
}

void load_weights(WeightLoader& l) {
    Model& m = l.model;
    const HParams& h = l.hp;
    const int64_t E = h.n_embd, V = h.n_vocab, S = h.n_ff_shexp;
    l.input(m.tok_embd, "token_embd.weight", {E, V});
    l.output(m.output_norm, "output_norm.weight", {E});
    l.output_or_tied(m.output, {E, V});
    for (uint32_t il = 0; il < h.n_layer; ++il) {
        LayerWeights& w = m.layers[il];
        l.req(il, w.attn_norm, "attn_norm.weight", {E});
        l.attention(il, w, true);
        l.req(il, w.ffn_norm, "ffn_norm.weight", {E});
        l.experts(il, w, h.n_ff_exp);
        l.req(il, w.shexp_gate, "ffn_gate_inp_shexp.weight", {E});
        l.req(il, w.w_gate_shexp, "ffn_gate_shexp.weight", {E, S});
        l.req(il, w.w_up_shexp, "ffn_up_shexp.weight", {E, S});
        l.req(il, w.w_down_shexp, "ffn_down_shexp.weight", {S, E});
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

        // experts: x + sum over the chosen e of p_e swiglu_e(h) + sigmoid(g . h) swiglu_shared(h),
        // h = rmsnorm(x)
        Tensor* h = g.rms_norm(x, w.ffn_norm);
        Tensor* moe =
            ggml::add(g.ctx, g.ffn_moe(w, h, GraphBuilder::MoeWeights::Softmax), g.ffn_shared_expert(w, h));
        x = g.layer_out(ggml::add(g.ctx, moe, x), il);
    }
    return g.logits(g.rms_norm(x, g.model.output_norm));
}

}  // namespace

extern const ArchRow kArchQwen2Moe{"qwen2moe", ggml::kRopeNeox, read_hparams, load_weights, build, true,
                                   Use::Required /* experts */, Use::Never /* sliding window */};

}  // namespace engine
