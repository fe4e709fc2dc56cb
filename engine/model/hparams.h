// Model hyper-parameters read from GGUF metadata: the keys every architecture shares here, the keys
// only some read in their architecture's row (engine/model/arch/), and the RoPE settings after the
// user's overrides (--rope-scaling, --rope-freq-base, --yarn-*) resolved as llama.cpp resolves them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ggml::gguf {
class File;
}

namespace engine {

enum class RopeScaling { None, Linear, Yarn, LongRope };
const char* rope_scaling_name(RopeScaling s);

// The user's RoPE overrides (llama-server's flags); unset values keep the model's.
struct RopeOverrides {
    bool scaling_set = false;
    RopeScaling scaling = RopeScaling::None;  // --rope-scaling (when scaling_set)
    float freq_base = 0.0f;                   // --rope-freq-base; 0 = the model's
    float freq_scale = 0.0f;                  // --rope-freq-scale, or 1/N from --rope-scale N; 0 = the model's
    uint32_t yarn_orig_ctx = 0;               // --yarn-orig-ctx; 0 = the model's
    float yarn_ext_factor = -1.0f;            // --yarn-ext-factor; < 0 = 1 for YaRN, 0 otherwise
    float yarn_attn_factor = -1.0f;           // --yarn-attn-factor; < 0 = the model's
    float yarn_beta_fast = -1.0f;             // --yarn-beta-fast; < 0 = 32
    float yarn_beta_slow = -1.0f;             // --yarn-beta-slow; < 0 = 1
};

struct HParams {
    std::string arch;  // general.architecture
    std::string name;  // general.name
    uint32_t n_ctx_train = 0;
    uint32_t n_embd = 0;
    uint32_t n_layer = 0;
    uint32_t n_ff = 0;
    uint32_t n_head = 0;
    uint32_t n_head_kv = 0;
    uint32_t n_embd_head_k = 0;  // per-head size of keys/queries
    uint32_t n_embd_head_v = 0;
    uint32_t n_rot = 0;  // rotated dimensions per head
    uint32_t n_vocab = 0;
    float rms_eps = 1e-5f;   // RMSNorm
    float norm_eps = 1e-5f;  // LayerNorm

    // RoPE, effective values (model metadata, then the overrides).
    int rope_mode = 0;  // ggml::kRopeNormal or kRopeNeox (the architecture's row decides)
    RopeScaling rope_scaling = RopeScaling::None;
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f;  // 1 / linear scaling factor
    uint32_t n_ctx_orig = 0;       // YaRN / LongRoPE: the context the model was trained at before scaling
    float yarn_ext_factor = 0.0f;  // YaRN extrapolation mix (0: none)
    float yarn_attn_factor = 1.0f; // llama.cpp's attention factor (magnitude of cos/sin before YaRN's own)
    float yarn_beta_fast = 32.0f;
    float yarn_beta_slow = 1.0f;
    float rope_attn_factor = 1.0f;  // rope.scaling.attn_factor (LongRoPE models)
    float yarn_log_mul = 0.0f;      // rope.scaling.yarn_log_multiplier
    // Sliding-window layers (gemma2/3) may rotate with their own base and scale.
    float rope_freq_base_swa = 10000.0f;
    float rope_freq_scale_swa = 1.0f;

    // Attention.
    bool causal = true;
    uint32_t n_swa = 0;            // sliding window in positions (0: none); applies to layers with swa_layers[il]
    std::vector<uint8_t> swa_layers;  // one flag per layer
    float attn_softcap = 0.0f;     // tanh soft-cap of the attention scores (0: none)
    float final_softcap = 0.0f;    // tanh soft-cap of the logits (0: none)
    // ALiBi (jina-bert-v2): no positional encoding; head h's scores get slope_h * -|p_q - p_k| (slopes from
    // this maximum bias, as ggml's soft_max computes them). 0: none.
    float max_alibi_bias = 0.0f;

    // Embeddings: the model's pooling (llama.cpp's pooling_type: -1 unspecified, 0 none, 1 mean, 2 cls,
    // 3 last, 4 rank) and the number of token types (BERT's segment embeddings).
    int pooling_type = -1;
    uint32_t n_token_types = 0;

    // Mixture of experts.
    uint32_t n_expert = 0;
    uint32_t n_expert_used = 0;
    uint32_t n_ff_exp = 0;    // feed-forward length of one expert
    uint32_t n_ff_shexp = 0;  // of the shared expert (0: none)

    uint32_t n_embd_k_gqa() const { return n_embd_head_k * n_head_kv; }
    uint32_t n_embd_v_gqa() const { return n_embd_head_v * n_head_kv; }
    bool is_swa(uint32_t il) const { return n_swa > 0 && il < swa_layers.size() && swa_layers[il]; }
    uint32_t n_swa_layers() const;

    // Reads and validates the hyper-parameters of a known architecture (its row reads its own keys) and
    // resolves RoPE: the model's values, the user's overrides, then YaRN's derived factors. Throws
    // std::runtime_error with a clear message.
    static HParams from_gguf(const ggml::gguf::File& f, const RopeOverrides& rope = {});
    // One line per feature: architecture, attention, RoPE, sliding window, experts (ggserve info, logs).
    std::vector<std::string> describe() const;
};

// describe()'s lines plus what the file's tensors add: RoPE frequency factors (rope_freqs.weight,
// LongRoPE's rope_factors_long/short), for ggserve info and the startup log.
std::vector<std::string> describe_model(const HParams& h, const ggml::gguf::File& f);

// Metadata readers for the architecture rows ("<arch>." is prefixed to key).
uint32_t read_u32(const ggml::gguf::File& f, const HParams& h, const std::string& key, uint32_t def,
                  bool required = false);
float read_f32(const ggml::gguf::File& f, const HParams& h, const std::string& key, float def);
// Marks the sliding-window layers from <arch>.attention.sliding_window_pattern: a period n (layer il
// slides when il % n < n - 1, so the last of every n layers is global; 0: every layer slides), or one
// flag per layer. def_period when the key is absent.
void read_swa_pattern(const ggml::gguf::File& f, HParams& h, uint32_t def_period);

}  // namespace engine
