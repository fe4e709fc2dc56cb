// gpt-oss: OpenAI's open-weight mixture of experts (gpt-oss-20b, -120b). Attention with q/k/v/output biases,
// NEOX RoPE with YaRN, a learned sink logit per head in every softmax, a sliding window on every other layer
// (0, 2, 4, ...); the feed-forward is expert_used_count of expert_count experts chosen per token by the
// router's logits (router bias included) and weighted by a softmax over the chosen ones, each expert with
// biases and the clamped SwiGLU (ggml::swiglu_oai). The norm before the experts is post_attention_norm.
#include <cmath>
#include <stdexcept>

#include "engine/model/arch/arch.h"
#include "engine/model/graph_builder.h"
#include "engine/model/weight_loader.h"

namespace engine {

namespace {

using ggml::Tensor;

void read_hparams(const ggml::gguf::File& f, HParams& h) {
    h.n_swa = read_u32(f, h, "attention.sliding_window", 0);
    if (h.n_ff_exp == 0)
        throw std::runtime_error("model metadata: gpt-oss needs 'gpt-oss.expert_feed_forward_length'");
    // llama.cpp's fixed pattern for gpt-oss (the files carry no sliding_window_pattern key).
    h.swa_layers.assign(h.n_layer, 0);
    for (uint32_t il = 0; il < h.n_layer; il += 2) h.swa_layers[il] = 1;
}

void load_weights(WeightLoader& l) {
    Model& m = l.model;
    const HParams& h = l.hp;
    const int64_t E = h.n_embd, V = h.n_vocab;
    l.input(m.tok_embd, "token_embd.weight", {E, V});
    l.output(m.output_norm, "output_norm.weight", {E});
    l.output_or_tied(m.output, {E, V});
    for (uint32_t il = 0; il < h.n_layer; ++il) {
        LayerWeights& w = m.layers[il];
        l.req(il, w.attn_norm, "attn_norm.weight", {E});
        l.attention(il, w, /*qkv_biases=*/true);
        l.req(il, w.attn_sinks, "attn_sinks.weight", {(int64_t)h.n_head});
        l.req(il, w.attn_post_norm, "post_attention_norm.weight", {E});
        l.experts(il, w, h.n_ff_exp);
        l.expert_biases(il, w, h.n_ff_exp);
    }
}

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const float kq_scale = 1.0f / std::sqrt((float)hp.n_embd_head_k);
    Tensor* x = g.embed();
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = g.model.layers[il];

        // attention: x + Wo attn(rope(Wq h + bq), rope(Wk h + bk), Wv h + bv) + bo, h = rmsnorm(x); each
        // head's softmax has its sink logit in the denominator
        auto [q, k, v] = g.qkv(w, g.rms_norm(x, w.attn_norm));
        Tensor* cur = g.mm(w.wo, g.attention(il, g.rope(q, il), g.rope(k, il), v, kq_scale), w.bo);
        x = g.residual(cur, x, il);

        // experts: x + sum over the chosen e of softmax(chosen logits)_e swiglu_oai_e(h), h = rmsnorm(x)
        Tensor* h = g.rms_norm(x, w.attn_post_norm);
        Tensor* moe = g.ffn_moe(w, h, GraphBuilder::MoeWeights::SoftmaxOfChosen,
                                GraphBuilder::MoeActivation::SwiGluOai);
        x = g.layer_out(ggml::add(g.ctx, moe, x), il);
    }
    return g.logits(g.rms_norm(x, g.model.output_norm));
}

}  // namespace

extern const ArchRow kArchGptOss{
    "gpt-oss",    ggml::kRopeNeox, read_hparams, load_weights, build, true, Use::Required /* experts */,
    Use::Required /* sliding window */};

}  // namespace engine
