// llama: Llama 1/2/3, Mistral, TinyLlama, SmolLM, stories. Pre-norm decoder: RMSNorm, attention with
// RoPE on adjacent pairs, SwiGLU. Variants in the same row: Mixtral-style experts (ffn_*_exps), a
// sliding window on every layer (Mistral: llama.attention.sliding_window), Llama-3.1 frequency factors
// (rope_freqs.weight), YaRN and linear RoPE scaling.
#include <cmath>

#include "engine/model/arch/arch.h"
#include "engine/model/graph_builder.h"
#include "engine/model/weight_loader.h"
#include "ggml/gguf.h"

namespace engine {

namespace {

using ggml::Tensor;

void read_hparams(const ggml::gguf::File& f, HParams& h) {
    h.n_swa = read_u32(f, h, "attention.sliding_window", 0);
}

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
        l.attention(il, w);
        l.req(il, w.ffn_norm, "ffn_norm.weight", {E});
        if (h.n_expert > 0) {
            l.experts(il, w, h.n_ff_exp ? h.n_ff_exp : F);
        } else {
            l.req(il, w.w_gate, "ffn_gate.weight", {E, F});
            l.req(il, w.w_up, "ffn_up.weight", {E, F});
            l.req(il, w.w_down, "ffn_down.weight", {F, E});
        }
        l.shared(il, w.rope_freqs, "rope_freqs.weight", {h.n_rot / 2});
    }
}

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const float kq_scale = 1.0f / std::sqrt((float)hp.n_embd_head_k);
    Tensor* x = g.embed();
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = g.model.layers[il];

        // attention: x + Wo attn(rope(Wq h), rope(Wk h), Wv h), h = rmsnorm(x)
        auto [q, k, v] = g.qkv(w, g.rms_norm(x, w.attn_norm));
        Tensor* cur = g.mm(w.wo, g.attention(il, g.rope(q, il), g.rope(k, il), v, kq_scale), w.bo);
        x = g.residual(cur, x, il);

        // feed-forward: x + swiglu(rmsnorm(x)), or the experts' weighted sum
        Tensor* h = g.rms_norm(x, w.ffn_norm);
        Tensor* ffn =
            w.router ? g.ffn_moe(w, h, GraphBuilder::MoeWeights::SoftmaxNormalized) : g.ffn_swiglu(w, h);
        x = g.layer_out(ggml::add(g.ctx, ffn, x), il);
    }
    return g.logits(g.rms_norm(x, g.model.output_norm));
}

}  // namespace

extern const ArchRow kArchLlama{"llama", ggml::kRopeNormal, read_hparams, load_weights, build, true,
                                Use::Optional /* experts */, Use::Optional /* sliding window */};

}  // namespace engine
