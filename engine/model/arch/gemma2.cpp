// gemma2: Gemma 2. Embeddings scaled by sqrt(n_embd); RMSNorm before and after both the attention and
// the feed-forward block (post_attention_norm, post_ffw_norm); RoPE on head halves (NEOX); queries scaled
// by 1/sqrt(head) (1/sqrt(n_embd / n_head) for the 46-layer 27B, as llama.cpp); attention scores and the
// final logits soft-capped with tanh; a sliding window on every other layer (0, 2, 4, ...); GeGLU.
#include <cmath>

#include "engine/model/arch/arch.h"
#include "engine/model/arch/gemma_weights.h"
#include "engine/model/graph_builder.h"

namespace engine {

namespace {

using ggml::Tensor;

void read_hparams(const ggml::gguf::File& f, HParams& h) {
    h.n_swa = read_u32(f, h, "attention.sliding_window", 4096);
    read_swa_pattern(f, h, 2);
    h.attn_softcap = read_f32(f, h, "attn_logit_softcapping", 50.0f);
    h.final_softcap = read_f32(f, h, "final_logit_softcapping", 30.0f);
}

void load_weights(WeightLoader& l) { load_gemma_weights(l, {.post_norms = true}); }

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const float q_scale =
        1.0f / std::sqrt(hp.n_layer == 46 ? (float)(hp.n_embd / hp.n_head) : (float)hp.n_embd_head_k);
    Tensor* x = g.embed_scaled();
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = g.model.layers[il];

        // attention: x + rmsnorm(Wo attn(rope(q) * q_scale, rope(k), v)), [q k v] from rmsnorm(x);
        // scores soft-capped, a sliding window on every other layer
        auto [q, k, v] = g.qkv(w, g.rms_norm(x, w.attn_norm));
        q = ggml::scale(g.ctx, g.rope(q, il), q_scale);
        Tensor* cur = g.rms_norm(g.mm(w.wo, g.attention(il, q, g.rope(k, il), v, 1.0f)), w.attn_post_norm);
        x = g.residual(cur, x, il);

        // feed-forward: x + rmsnorm(geglu(rmsnorm(x)))
        Tensor* ffn = g.rms_norm(g.ffn_geglu(w, g.rms_norm(x, w.ffn_norm)), w.ffn_post_norm);
        x = g.layer_out(ggml::add(g.ctx, ffn, x), il);
    }
    Tensor* logits = g.logits(g.rms_norm(x, g.model.output_norm));
    return hp.final_softcap > 0.0f ? ggml::softcap(g.ctx, logits, hp.final_softcap) : logits;
}

}  // namespace

extern const ArchRow kArchGemma2{"gemma2", ggml::kRopeNeox, read_hparams, load_weights, build, true,
                                 Use::Never /* experts */, Use::Required /* sliding window */};

}  // namespace engine
