// qwen3moe: Qwen 3 mixture of experts. Qwen 3's attention (NEOX RoPE, RMSNorm of every query and key
// head) and, in place of the feed-forward, expert_used_count of expert_count SwiGLU experts of
// expert_feed_forward_length rows, chosen per token by softmax routing, weights renormalized over the
// chosen ones; no shared expert.
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
    if (h.n_ff_exp == 0)
        throw std::runtime_error("model metadata: qwen3moe needs 'qwen3moe.expert_feed_forward_length'");
}

void load_weights(WeightLoader& l) {
    Model& m = l.model;
    const HParams& h = l.hp;
    const int64_t E = h.n_embd, V = h.n_vocab, D = h.n_embd_head_k;
    const int64_t Q = D * h.n_head, K = h.n_embd_k_gqa(), Vg = h.n_embd_v_gqa();
    l.input(m.tok_embd, "token_embd.weight", {E, V});
    l.output(m.output_norm, "output_norm.weight", {E});
    l.output_or_tied(m.output, {E, V});
    for (uint32_t il = 0; il < h.n_layer; ++il) {
        LayerWeights& w = m.layers[il];
        l.req(il, w.attn_norm, "attn_norm.weight", {E});
        l.req(il, w.wq, "attn_q.weight", {E, Q});
        l.req(il, w.wk, "attn_k.weight", {E, K});
        l.req(il, w.wv, "attn_v.weight", {E, Vg});
        l.req(il, w.q_norm, "attn_q_norm.weight", {D});
        l.req(il, w.k_norm, "attn_k_norm.weight", {D});
        l.req(il, w.wo, "attn_output.weight", {(int64_t)h.n_embd_head_v * h.n_head, E});
        l.req(il, w.ffn_norm, "ffn_norm.weight", {E});
        l.experts(il, w, h.n_ff_exp);
    }
}

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const float kq_scale = 1.0f / std::sqrt((float)hp.n_embd_head_k);
    Tensor* x = g.embed();
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = g.model.layers[il];

        // attention: x + Wo attn(rope(rmsnorm_head(Wq h)), rope(rmsnorm_head(Wk h)), Wv h), h = rmsnorm(x)
        auto [q, k, v] = g.qkv(w, g.rms_norm(x, w.attn_norm));
        q = g.rope(g.rms_norm(q, w.q_norm), il);
        k = g.rope(g.rms_norm(k, w.k_norm), il);
        Tensor* cur = g.mm(w.wo, g.attention(il, q, k, v, kq_scale));
        x = g.residual(cur, x, il);

        // experts: x + sum over the chosen e of p_e / sum(p) swiglu_e(rmsnorm(x))
        Tensor* moe = g.ffn_moe(w, g.rms_norm(x, w.ffn_norm), GraphBuilder::MoeWeights::SoftmaxNormalized);
        x = g.layer_out(ggml::add(g.ctx, moe, x), il);
    }
    return g.logits(g.rms_norm(x, g.model.output_norm));
}

}  // namespace

extern const ArchRow kArchQwen3Moe{"qwen3moe", ggml::kRopeNeox, read_hparams, load_weights, build, true,
                                   Use::Required /* experts */, Use::Never /* sliding window */};

}  // namespace engine
