// gemma3: Gemma 3 (text). Gemma 2's layer (embedding scaling, pre- and post-norms, NEOX RoPE, queries
// scaled by 1/sqrt(head), GeGLU) without soft-capping, with an RMSNorm of every query and key head, and
// a sliding-window pattern (attention.sliding_window_pattern, default 6: five local layers, then a global
// one); the local layers rotate with their own base (rope.freq_base_swa, default 10000) and no scaling,
// the global ones with the model's base and scaling.
#include <cmath>

#include "engine/model/arch/arch.h"
#include "engine/model/arch/gemma_weights.h"
#include "engine/model/graph_builder.h"
#include "ggml/gguf.h"

namespace engine {

namespace {

using ggml::Tensor;

void read_hparams(const ggml::gguf::File& f, HParams& h) {
    h.n_swa = read_u32(f, h, "attention.sliding_window", 4096);
    read_swa_pattern(f, h, 6);
    h.rope_freq_base_swa = read_f32(f, h, "rope.freq_base_swa", 10000.0f);
    h.rope_freq_scale_swa = 1.0f;
    h.final_softcap = read_f32(f, h, "final_logit_softcapping", 0.0f);
}

void load_weights(WeightLoader& l) { load_gemma_weights(l, {.post_norms = true, .qk_norms = true}); }

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const float q_scale =
        1.0f / std::sqrt(hp.n_layer == 62 ? (float)(hp.n_embd / hp.n_head) : (float)hp.n_embd_head_k);
    Tensor* x = g.embed_scaled();
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = g.model.layers[il];

        // attention: x + rmsnorm(Wo attn(rope(rmsnorm_head(q)) * q_scale, rope(rmsnorm_head(k)), v)),
        // [q k v] from rmsnorm(x); local layers: the sliding window and the local RoPE base
        auto [q, k, v] = g.qkv(w, g.rms_norm(x, w.attn_norm));
        q = ggml::scale(g.ctx, g.rope(g.rms_norm(q, w.q_norm), il), q_scale);
        k = g.rope(g.rms_norm(k, w.k_norm), il);
        Tensor* cur = g.rms_norm(g.mm(w.wo, g.attention(il, q, k, v, 1.0f)), w.attn_post_norm);
        x = g.residual(cur, x, il);

        // feed-forward: x + rmsnorm(geglu(rmsnorm(x)))
        Tensor* ffn = g.rms_norm(g.ffn_geglu(w, g.rms_norm(x, w.ffn_norm)), w.ffn_post_norm);
        x = g.layer_out(ggml::add(g.ctx, ffn, x), il);
    }
    Tensor* logits = g.logits(g.rms_norm(x, g.model.output_norm));
    return hp.final_softcap > 0.0f ? ggml::softcap(g.ctx, logits, hp.final_softcap) : logits;
}

}  // namespace

extern const ArchRow kArchGemma3{"gemma3", ggml::kRopeNeox, read_hparams, load_weights, build, true,
                                 Use::Never /* experts */, Use::Required /* sliding window */};

}  // namespace engine
