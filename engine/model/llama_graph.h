// The forward graph of the llama architecture (Llama 2/3, Mistral, TinyLlama, SmolLM, stories).
#pragma once

#include <cstdint>

#include "engine/model/kv_cache.h"
#include "engine/model/model.h"
#include "ggml/ggml.h"

namespace engine {

struct GraphInputs {
    ggml::Tensor* tokens = nullptr;    // I32 [n_tokens]
    ggml::Tensor* pos = nullptr;       // I32 [n_tokens]
    ggml::Tensor* kv_cells = nullptr;  // I32 [n_tokens]: the cache cell each token is written to
    ggml::Tensor* mask = nullptr;      // F32 [n_kv, n_tokens]
    ggml::Tensor* out_ids = nullptr;   // I32 [n_outputs]: tokens whose logits are computed
    ggml::Tensor* logits = nullptr;    // F32 [n_vocab, n_outputs] (the result)
};

struct GraphShape {
    uint32_t n_tokens;
    uint32_t n_outputs;
    uint32_t n_kv;
    bool flash_attn;
};

GraphInputs build_llama_graph(ggml::Context& ctx, const Model& m, const KvCache& kv, const GraphShape& s);

}  // namespace engine
