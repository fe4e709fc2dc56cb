// A loaded model: hyper-parameters, vocabulary and weights (mmapped, never copied on the CPU).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/model/hparams.h"
#include "ggml/ggml.h"
#include "ggml/gguf.h"

namespace engine {

class Vocab;

struct LayerWeights {
    ggml::Tensor* attn_norm = nullptr;
    ggml::Tensor* wq = nullptr;
    ggml::Tensor* wk = nullptr;
    ggml::Tensor* wv = nullptr;
    ggml::Tensor* wo = nullptr;
    ggml::Tensor* ffn_norm = nullptr;
    ggml::Tensor* w_gate = nullptr;
    ggml::Tensor* w_up = nullptr;
    ggml::Tensor* w_down = nullptr;
};

class Model {
public:
    // Opens and validates a GGUF model. Throws std::runtime_error (or a subclass) with a clear message.
    static std::unique_ptr<Model> load(const std::string& path);
    ~Model();

    const HParams& hparams() const { return hp_; }
    const Vocab& vocab() const { return *vocab_; }
    const ggml::gguf::File& gguf() const { return *file_; }
    const std::string& path() const { return path_; }

    ggml::Tensor* tok_embd = nullptr;
    ggml::Tensor* output_norm = nullptr;
    ggml::Tensor* output = nullptr;  // tok_embd when the model ties embeddings
    std::vector<LayerWeights> layers;

    uint64_t n_params() const { return n_params_; }
    uint64_t n_bytes() const { return n_bytes_; }  // weight bytes
    // e.g. "llama ?B Q4_0": architecture, size class and the dominant weight type.
    std::string description() const;
    // The chat template stored in the file (tokenizer.chat_template), empty if none.
    std::string chat_template() const;

private:
    Model() = default;
    ggml::Tensor* weight(const std::string& name, std::initializer_list<int64_t> shape, bool required = true);

    std::string path_;
    HParams hp_;
    std::unique_ptr<ggml::gguf::File> file_;
    std::unique_ptr<Vocab> vocab_;
    ggml::Context ctx_{0, true};
    uint64_t n_params_ = 0;
    uint64_t n_bytes_ = 0;
};

}  // namespace engine
