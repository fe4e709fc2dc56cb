#include "engine/model/arch/gemma_weights.h"

#include "engine/model/weight_loader.h"

namespace engine {

void load_gemma_weights(WeightLoader& l, const GemmaLayout& layout) {
    Model& m = l.model;
    const HParams& h = l.hp;
    const int64_t E = h.n_embd, V = h.n_vocab, F = h.n_ff, D = h.n_embd_head_k;
    l.input(m.tok_embd, "token_embd.weight", {E, V});
    l.output(m.output_norm, "output_norm.weight", {E});
    l.output_or_tied(m.output, {E, V});
    for (uint32_t il = 0; il < h.n_layer; ++il) {
        LayerWeights& w = m.layers[il];
        l.req(il, w.attn_norm, "attn_norm.weight", {E});
        l.attention(il, w);
        if (layout.qk_norms) {
            l.req(il, w.q_norm, "attn_q_norm.weight", {D});
            l.req(il, w.k_norm, "attn_k_norm.weight", {D});
        }
        if (layout.post_norms) l.req(il, w.attn_post_norm, "post_attention_norm.weight", {E});
        l.req(il, w.ffn_norm, "ffn_norm.weight", {E});
        l.req(il, w.w_gate, "ffn_gate.weight", {E, F});
        l.req(il, w.w_up, "ffn_up.weight", {E, F});
        l.req(il, w.w_down, "ffn_down.weight", {F, E});
        if (layout.post_norms) l.req(il, w.ffn_post_norm, "post_ffw_norm.weight", {E});
    }
}

}  // namespace engine
