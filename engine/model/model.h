// A loaded model: hyper-parameters, vocabulary and weights (mmapped, never copied on the CPU).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/hparams.h"
#include "ggml/backend.h"
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

// Where the weights live. With n_gpu_layers = N > 0 the last N repeating layers (and, when N exceeds
// n_layer, the output norm and matrix) are uploaded to the offload backend, as llama.cpp places them;
// everything else stays in the mmap. The KV cache of an offloaded layer lives on that backend too.
struct ModelParams {
    int n_gpu_layers = 0;
    int main_gpu = 0;  // the CUDA device used when offload_backend is empty
    // Makes the offload backend; empty: the CUDA device main_gpu. Tests give a second CPU backend, which
    // runs the whole offload path (uploads, scheduler splits, copies) without a GPU.
    std::function<std::unique_ptr<ggml::Backend>()> offload_backend;
};

class Model {
public:
    // Opens and validates a GGUF model and places its weights. Throws std::runtime_error (or a subclass,
    // such as ggml::Error when the offload device cannot be used) with a clear message.
    static std::unique_ptr<Model> load(const std::string& path, const ModelParams& params = {});
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

    // The backend holding offloaded layers; nullptr when every weight is on the host. A model with one
    // is used by one context at a time (the backend's queue is shared).
    ggml::Backend* offload_backend() const { return offload_.get(); }
    // Where layer il's weights and KV cache live: the offload backend, or nullptr for the host.
    ggml::Backend* layer_backend(uint32_t il) const {
        return offload_ && il >= first_offloaded_ ? offload_.get() : nullptr;
    }
    uint32_t n_offloaded_layers() const { return offload_ ? hp_.n_layer - first_offloaded_ : 0; }
    bool output_offloaded() const { return offload_ && output_offloaded_; }

private:
    Model() = default;
    ggml::Tensor* weight(const std::string& name, std::initializer_list<int64_t> shape, bool required = true);
    // Uploads the weights that params puts on the offload backend (model_offload.cpp).
    void offload(const ModelParams& params);

    std::string path_;
    HParams hp_;
    std::unique_ptr<ggml::gguf::File> file_;
    std::unique_ptr<Vocab> vocab_;
    ggml::Context ctx_{0, true};
    uint64_t n_params_ = 0;
    uint64_t n_bytes_ = 0;
    // Offloaded weights: device twins of the mmapped tensors, in one buffer of offload_.
    std::unique_ptr<ggml::Backend> offload_;
    ggml::Context offload_ctx_{0, true};
    std::unique_ptr<ggml::Buffer> offload_buffer_;
    uint32_t first_offloaded_ = 0;
    bool output_offloaded_ = false;
};

}  // namespace engine
