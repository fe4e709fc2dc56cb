// Control vectors (llama-server's --control-vector, --control-vector-scaled, --control-vector-layer-range):
// GGUF files as llama.cpp's cvector-generator writes them, one F32 tensor `direction.N` of n_embd values
// per layer N >= 1 (metadata controlvector.model_hint / controlvector.layer_count is informative only).
// Several files add up, each times its scale (a file may also repeat a layer: those add up too). The
// sum for layer N is added to the output of layer N (0-based: after the layer's last residual add, the
// stream the next layer reads) for every token, when START <= N <= END (inclusive; START <= 0 means 1,
// END <= 0 means n_layer, as llama.cpp). Layer 0's output is never steered: there is no direction.0.
// Directions for layers the model does not have are ignored (as llama.cpp), and a layer whose sum is
// all zeros adds nothing to the graph, so a zero vector or scale 0 is the base model bit for bit.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ggml/backend.h"
#include "ggml/ggml.h"

namespace engine {

class Model;

struct ControlVectorFile {
    std::string path;
    float scale = 1.0f;
};

// The scaled sum of the files: layers[N - 1] is layer N's direction (n_embd floats, zeros where no file
// has one). Throws std::runtime_error naming the file and the problem: unreadable, no direction tensors,
// a tensor that is not `direction.N` with N >= 1, not F32, not one-dimensional, or of another length
// than the others.
struct ControlVectorSum {
    int64_t n_embd = 0;
    std::vector<std::vector<float>> layers;
};
ControlVectorSum sum_control_vectors(const std::vector<ControlVectorFile>& files);

class ControlVector {
  public:
    // The sum checked against the model (its n_embd; a decoder: llama.cpp adds no control vector to an
    // encoder's layers either) and cut to the layer range. Throws std::runtime_error with the reason.
    static std::unique_ptr<ControlVector> create(const ControlVectorSum& sum, const Model& base,
                                                 int layer_start, int layer_end);
    ~ControlVector();

    // What layer il's output gets ([n_embd] F32), or nullptr.
    ggml::Tensor* layer(uint32_t il) const { return il < tensors_.size() ? tensors_[il] : nullptr; }
    uint32_t n_layers() const { return (uint32_t)tensors_.size(); }  // the model's
    // The range after llama.cpp's defaults, inclusive.
    int layer_start() const { return start_; }
    int layer_end() const { return end_; }
    // Layers whose output is changed.
    size_t n_steered() const;
    // Directions of layers beyond the model's last (ignored), e.g. a vector made for a deeper model.
    size_t n_ignored() const { return ignored_; }

  private:
    ControlVector() = default;
    ggml::Context ctx_;
    std::vector<ggml::Tensor*> tensors_;            // by layer; nullptr: unchanged
    std::vector<float> data_;                       // the host tensors' values
    ggml::Context offload_ctx_;
    std::unique_ptr<ggml::Buffer> offload_buffer_;  // twins of offloaded layers' vectors
    int start_ = 1, end_ = 0;
    size_t ignored_ = 0;
};

}  // namespace engine
