// LoRA adapters (GGUF files with general.type = "adapter", adapter.type = "lora", as llama.cpp's
// convert_lora_to_gguf.py writes them): for a base projection W [in, out] the pair W.lora_a [in, r] and
// W.lora_b [r, out], and adapter.lora.alpha. Applied in the graph, not merged: every product of an
// adapted weight becomes W x + s * (alpha / r) * B (A x), with s the adapter's scale for each token's
// sequence (GraphBuilder::mm), so requests with different adapters share one batch and a token's result
// depends on its own sequence's scales only. With -ngl, the pairs of offloaded weights are uploaded to
// the offload backend too.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "ggml/backend.h"
#include "ggml/ggml.h"
#include "ggml/gguf.h"

namespace engine {

class Model;

class LoraAdapter {
  public:
    struct Pair {
        ggml::Tensor* a;  // [in, r]
        ggml::Tensor* b;  // [r, out]
        float factor;     // alpha / r (1 when the file has no alpha)
    };

    // Opens and checks an adapter for this model: the architecture, every pair's base weight (a 2-D
    // projection the graph multiplies: not token_embd, not expert tensors) and shapes. Throws
    // std::runtime_error naming the file and the problem.
    static std::unique_ptr<LoraAdapter> load(const std::string& path, const Model& base);
    ~LoraAdapter();

    const std::string& path() const { return path_; }
    float alpha() const { return alpha_; }
    // adapter.lora.task_name and adapter.lora.prompt_prefix: what the file says it was trained for
    // (informational, listed by GET /lora-adapters); empty when absent.
    const std::string& task_name() const { return task_name_; }
    const std::string& prompt_prefix() const { return prompt_prefix_; }
    size_t n_pairs() const { return pairs_.size(); }
    // The pair adapting the base weight of this name, or nullptr.
    const Pair* find(const char* weight_name) const;

  private:
    LoraAdapter() = default;
    std::string path_;
    float alpha_ = 0.0f;
    std::string task_name_, prompt_prefix_;
    std::unique_ptr<ggml::gguf::File> file_;  // the tensors' data (mapped)
    ggml::Context ctx_;
    // Pairs of weights on the model's offload backend get twins there (as the weights do), so that the
    // adapter's products run on the device beside the weight's.
    ggml::Context offload_ctx_;
    std::unique_ptr<ggml::Buffer> offload_buffer_;
    std::unordered_map<std::string, Pair> pairs_;
};

}  // namespace engine
