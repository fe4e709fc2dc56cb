// Which type each tensor of a model gets when it is quantized to a file type: llama.cpp's rules
// (llama-quant.cpp), restated as data. A tensor is classified by its name (Category); the rule table in
// tensor_rules.cpp maps (category, file type, a condition on the layer and the model) to a type; the
// first matching row wins, as in llama.cpp's if/else chains. The outer steps are llama.cpp's too:
// 1-D tensors, norms, routers and a few others are never quantized; --token-embedding-type and
// --output-tensor-type apply first; then --tensor-type patterns (first match), else the mix rules unless
// --pure; last, a tensor whose rows do not divide into the type's blocks falls back to a type that fits.
//
// The rules need llama.cpp's weight order (sort_weights): per-layer counters (the n-th attn_v, the n-th
// ffn_down) stand for the layer index in models without experts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/quantize/file_type.h"
#include "ggml/gguf.h"
#include "ggml/types.h"

namespace engine::quant {

enum class Category : uint8_t {
    TokenEmbd,  // token_embd.weight, per_layer_token_embd.weight
    AttnQ,
    AttnK,
    AttnV,
    AttnQkv,  // fused q/k/v: treated as attn_v
    AttnKvB,  // MLA's kv_b: treated as attn_v
    AttnOutput,
    FfnUp,  // every name containing ffn_up (experts and shared experts too)
    FfnGate,
    FfnDown,
    Output,  // output.weight
    Other,
};
Category tensor_category(const std::string& name);
const char* category_name(Category c);

// What the rules need to know about the model (from its GGUF metadata).
struct ModelFacts {
    std::string arch;
    int n_layer = 0;    // <arch>.block_count
    int n_head = 0;     // of layer 0
    int n_head_kv = 0;  // of layer 0 (= n_head when absent)
    int n_expert = 0;
    int n_gqa() const { return n_head_kv > 0 ? n_head / n_head_kv : 0; }
    // llama.cpp's "70B" model class (80-layer llama with grouped KV heads, qwen2, deci), whose attn_v
    // gets more bits.
    bool is_70b() const;
    // Throws std::runtime_error naming a missing or malformed key.
    static ModelFacts from_gguf(const ggml::gguf::File& f);
};

struct TensorDesc {
    std::string name;
    ggml::Type type = ggml::Type::F32;
    int64_t ne[4] = {1, 1, 1, 1};
    int n_dims() const;  // ggml_n_dims: trailing dimensions of 1 do not count
};

// llama.cpp's weight order: tensors outside blk.N first, then by layer; by name within each.
void sort_weights(std::vector<TensorDesc>& tensors);

struct TensorTypeOverride {  // --tensor-type PATTERN=TYPE: an ECMAScript regex searched in the name
    std::string pattern;
    ggml::Type type;
};

struct MixOptions {
    FileType ftype = FileType::Q8_0;
    bool pure = false;             // --pure: the file type's type everywhere (still with fallbacks)
    bool quantize_output = true;   // false: --leave-output-tensor
    bool only_copy = false;        // COPY
    bool has_imatrix = false;      // rules differ with an importance matrix (ggserve never has one)
    std::optional<ggml::Type> output_type;      // --output-tensor-type
    std::optional<ggml::Type> token_embd_type;  // --token-embedding-type
    std::vector<TensorTypeOverride> tensor_types;
};

struct TensorChoice {
    ggml::Type type = ggml::Type::F32;  // the type written (the source type when not quantizable)
    bool quantizable = false;           // llama.cpp would consider quantizing it at all
    bool manual = false;                // picked by a --tensor-type pattern
    bool fallback = false;              // rows did not divide into the chosen type's blocks
    bool requires_imatrix = false;      // llama.cpp refuses this type here without an importance matrix
};

// The type of every tensor, tensors in llama.cpp's order (sort_weights). Throws std::runtime_error when
// llama.cpp would fail too: a ragged tensor whose type has no fallback, an expert tensor whose layer
// cannot be read from its name, a --tensor-type pattern that is not a valid regex.
std::vector<TensorChoice> choose_types(const ModelFacts& model, const std::vector<TensorDesc>& tensors,
                                       const MixOptions& options);

// Whether llama.cpp would quantize a tensor of this name and shape at all.
bool tensor_allows_quantization(const std::string& name, int n_dims, bool quantize_output);

}  // namespace engine::quant
