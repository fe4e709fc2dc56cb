// What an architecture's graph builder (arch/<name>.cpp) works with: the graph's inputs and the shared
// building blocks of a transformer layer (embeddings, projections, norms, RoPE, attention with the KV
// cache, feed-forward variants, experts), small functions that each add a few ops. A builder is one
// function with one layer loop that reads like the model's equations.
//
// Every product of a weight matrix goes through mm() (and mm_experts() for expert tensors), so an
// adapter added to the base projection hooks in there.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/kv_cache.h"
#include "engine/model/model.h"
#include "ggml/ggml.h"

namespace engine {

struct GraphInputs {
    ggml::Tensor* tokens = nullptr;    // I32 [n_tokens]
    ggml::Tensor* pos = nullptr;       // I32 [n_tokens]
    ggml::Tensor* kv_cells = nullptr;  // I32 [n_tokens]: the cache cell each token is written to
    ggml::Tensor* mask = nullptr;      // F32 [n_kv, n_tokens]
    ggml::Tensor* mask_swa = nullptr;  // F32 [n_kv, n_tokens]: the sliding-window layers' mask (or nullptr)
    // I32 [1 + n_kv blocks, n_tokens]: the cache blocks each token's sequences occupy (KvCache::fill_blocks),
    // so that attention on the CPU visits only those (ggml::with_kv_blocks)
    ggml::Tensor* kv_blocks = nullptr;
    ggml::Tensor* out_ids = nullptr;   // I32 [n_outputs]: tokens whose logits are computed
    ggml::Tensor* logits = nullptr;    // F32 [n_vocab, n_outputs] (the result)
    ggml::Tensor* logit_sel = nullptr; // I32 [n_logit_rows]: output rows that need logits (when not all do)
};

class LoraAdapter;
class ControlVector;

// An adapter in this graph: its per-token scales (each token's sequence's scale, F32 [1, n_tokens]) and
// those of the output tokens ([1, n_outputs]), for products after the last layer keeps only outputs.
struct LoraInput {
    const LoraAdapter* adapter = nullptr;
    ggml::Tensor* scale = nullptr;
    ggml::Tensor* scale_out = nullptr;
};

struct GraphShape {
    uint32_t n_tokens;
    uint32_t n_outputs;
    uint32_t n_kv;
    bool flash_attn;
    bool long_rope = false;  // LongRoPE models: the context exceeds the original one (rope_factors_long)
    // Output rows that need logits (GraphInputs::logit_sel picks them); the others want only their hidden
    // state. ~0u: all of them.
    uint32_t n_logit_rows = ~0u;
};

// RoPE of layer il at positions pos (I32 [x->ne[2]]): the layer's base and scale (sliding-window layers
// may have their own), the model's frequency factors (LongRoPE: the long ones when long_rope) and YaRN.
// magnitude: apply YaRN's magnitude correction (a K-shift rotates stored keys, which already have it).
ggml::Tensor* rope_layer(ggml::Context& ctx, const Model& m, ggml::Tensor* x, ggml::Tensor* pos, uint32_t il,
                         bool long_rope, bool magnitude = true);

class GraphBuilder {
public:
    GraphBuilder(ggml::Context& ctx, const Model& m, const KvCache& kv, const GraphShape& s);

    ggml::Context& ctx;
    const Model& model;
    const HParams& hp;
    const KvCache& kv;
    const GraphShape shape;
    GraphInputs in;
    std::vector<LoraInput> lora;  // adapters some token of this graph uses (add_lora)
    const ControlVector* cvec = nullptr;  // control vectors added to the layers' outputs (layer_out)

    // Token embeddings: rows of token_embd, [n_embd, n_tokens].
    ggml::Tensor* embed() const;
    // The embeddings times sqrt(n_embd) (the Gemma family).
    ggml::Tensor* embed_scaled() const;
    // w x (+ b): the one place where a weight matrix multiplies activations. With adapters, each one
    // that adapts w adds scale_t * factor * B (A x) to every token's column t.
    ggml::Tensor* mm(ggml::Tensor* w, ggml::Tensor* x, ggml::Tensor* b = nullptr) const;
    // Adds an adapter's scale inputs (before the graph is built).
    LoraInput& add_lora(const LoraAdapter* adapter);
    // RMSNorm: x / rms(x) * w per row (w may be nullptr).
    ggml::Tensor* rms_norm(ggml::Tensor* x, ggml::Tensor* w) const;
    // LayerNorm: (x - mean) / sqrt(var + norm_eps) * w + b per row (w, b may be nullptr).
    ggml::Tensor* layer_norm(ggml::Tensor* x, ggml::Tensor* w, ggml::Tensor* b) const;

    // The attention projections of layer w: q [head, n_head, n], k [head, n_head_kv, n] and v
    // [head_v * n_head_kv, n], from separate or fused (attn_qkv) weights, biases added.
    struct Qkv {
        ggml::Tensor *q, *k, *v;
    };
    Qkv qkv(const LayerWeights& w, ggml::Tensor* x) const;
    // RoPE of layer il (its base and scale: sliding-window layers may have their own; frequency factors
    // and YaRN from the model).
    ggml::Tensor* rope(ggml::Tensor* x, uint32_t il) const;
    // Writes k and v into layer il's cache cells and attends q to every cell its mask allows (causal;
    // the sliding window on SWA layers): softmax(kq_scale * softcap(K^T q) + mask) V, heads
    // concatenated: [head_v * n_head, n]. softcap (hp.attn_softcap) is c tanh(s / c); flash attention caps
    // kq_scale * s instead, the same when kq_scale is 1 (gemma2 scales q beforehand, as llama.cpp). A layer
    // with attention sinks (attn_sinks, gpt-oss) adds each head's sink logit to the softmax's denominator.
    ggml::Tensor* attention(uint32_t il, ggml::Tensor* q, ggml::Tensor* k, ggml::Tensor* v, float kq_scale) const;
    // SwiGLU feed-forward: down(silu(gate x) * up x), from ffn_gate/ffn_up or a fused gate-up matrix.
    ggml::Tensor* ffn_swiglu(const LayerWeights& w, ggml::Tensor* x) const;
    // How the router's logits l = router x (+ router_b) weigh the n_expert_used experts with the largest l.
    enum class MoeWeights {
        Softmax,            // p = softmax(l) over every expert; the chosen ones' p_e as they are (qwen2moe)
        SoftmaxNormalized,  // p_e / the sum of the chosen p (Mixtral, Qwen3-MoE)
        SoftmaxOfChosen,    // a softmax over the chosen experts' logits alone (gpt-oss)
    };
    // The experts' activation: SwiGLU, or gpt-oss's clamped one (ggml::swiglu_oai, alpha 1.702, limit 7).
    enum class MoeActivation { SwiGlu, SwiGluOai };
    // Mixture of experts: the chosen experts' feed-forwards down(act(gate x, up x)), each product with its
    // expert's bias where the layer has them, summed with their weights. [n_embd, n].
    ggml::Tensor* ffn_moe(const LayerWeights& w, ggml::Tensor* x, MoeWeights weighting,
                          MoeActivation act = MoeActivation::SwiGlu) const;
    // The shared expert (qwen2moe), which every token runs beside the chosen ones: a SwiGLU feed-forward of
    // ffn_{gate,up,down}_shexp scaled per token by sigmoid(shexp_gate . x), the sigmoid computed from
    // tanh (llama.cpp's silu(g) / g is NaN where g is 0). [n_embd, n].
    ggml::Tensor* ffn_shared_expert(const LayerWeights& w, ggml::Tensor* x) const;
    // Expert products: as[ids[e, t]] x[:, e or 0, t] (ggml::mul_mat_id); the experts' mm().
    ggml::Tensor* mm_experts(ggml::Tensor* as, ggml::Tensor* x, ggml::Tensor* ids) const;
    // GeGLU feed-forward (gemma): down(gelu(gate x) * up x).
    ggml::Tensor* ffn_geglu(const LayerWeights& w, ggml::Tensor* x) const;
    // The output of layer il (after its last residual add), with the control vector's direction for
    // that layer added to every token's row when there is one (engine/model/control_vector.h).
    ggml::Tensor* layer_out(ggml::Tensor* x, uint32_t il) const;
    // At the last layer, the rows of the tokens that want logits (everything else is not needed).
    ggml::Tensor* outputs_only(ggml::Tensor* t, uint32_t il) const;
    // x + sub, the residual around a layer's attention: at the last layer only the rows that want outputs
    // of both go on (outputs_only), so the layer's feed-forward runs on those rows alone.
    ggml::Tensor* residual(ggml::Tensor* sub, ggml::Tensor* x, uint32_t il) const;
    // The logits: the output matrix (+ bias) times the final hidden states. Records x as `hidden`, which a
    // context made for embeddings returns instead (the logits and what follows them are then not computed),
    // and which tokens that asked for their hidden state read beside the others' logits (only the rows of
    // shape.n_logit_rows then go through the output matrix; none: x itself is returned).
    ggml::Tensor* logits(ggml::Tensor* x) const;
    mutable ggml::Tensor* hidden = nullptr;
};

}  // namespace engine
