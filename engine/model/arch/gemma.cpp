// gemma: Gemma 1. Embeddings scaled by sqrt(n_embd); RMSNorm before the attention and the feed-forward
// (the GGUF norm weights already hold Gemma's 1 + w: llama.cpp's converter adds the 1); RoPE on head
// halves (NEOX) with the head size of attention.key_length; queries scaled by 1/sqrt(head); GeGLU with
// the tanh GELU; the output matrix is the token embeddings. Gemma 2's layer without its post-norms,
// soft-caps and sliding window.
#include <cmath>

#include "engine/model/arch/arch.h"
#include "engine/model/arch/gemma_weights.h"
#include "engine/model/graph_builder.h"

namespace engine {

namespace {

using ggml::Tensor;

void read_hparams(const ggml::gguf::File&, HParams&) {}

void load_weights(WeightLoader& l) { load_gemma_weights(l, {}); }

Tensor* build(GraphBuilder& g) {
    const HParams& hp = g.hp;
    const float q_scale = 1.0f / std::sqrt((float)hp.n_embd_head_k);
    Tensor* x = g.embed_scaled();
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const LayerWeights& w = g.model.layers[il];

        // attention: x + Wo attn(rope(q) * q_scale, rope(k), v), [q k v] from rmsnorm(x)
        auto [q, k, v] = g.qkv(w, g.rms_norm(x, w.attn_norm));
        q = ggml::scale(g.ctx, g.rope(q, il), q_scale);
        Tensor* cur = g.mm(w.wo, g.attention(il, q, g.rope(k, il), v, 1.0f));
        x = g.residual(cur, x, il);

        // feed-forward: x + geglu(rmsnorm(x))
        x = g.layer_out(ggml::add(g.ctx, g.ffn_geglu(w, g.rms_norm(x, w.ffn_norm)), x), il);
    }
    return g.logits(g.rms_norm(x, g.model.output_norm));
}

}  // namespace

extern const ArchRow kArchGemma{"gemma", ggml::kRopeNeox, read_hparams, load_weights, build, true,
                                Use::Never /* experts */, Use::Never /* sliding window */};

}  // namespace engine
