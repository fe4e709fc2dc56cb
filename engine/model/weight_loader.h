// Binds a model's pointers to the weights of its GGUF file, for the architecture rows' load_weights.
// Every weight is checked (name present, exact shape, a type the kernels can read) and recorded with
// its placement (a layer, the host input, the output head), which is all offloading needs to know.
#pragma once

#include <initializer_list>
#include <map>
#include <string>

#include "engine/model/arch/arch.h"
#include "engine/model/model.h"

namespace engine {

class WeightLoader {
public:
    using Shape = std::initializer_list<int64_t>;
    explicit WeightLoader(Model& m) : model(m), hp(m.hp_) {}

    Model& model;
    const HParams& hp;

    // token_embd and the like: read on the host by get_rows, never offloaded.
    void input(ggml::Tensor*& slot, const std::string& name, Shape shape);
    // The output head (output_norm, output, their biases): offloaded when -ngl exceeds the layers.
    // Returns false (slot stays nullptr) when an optional one is absent.
    bool output(ggml::Tensor*& slot, const std::string& name, Shape shape, bool required = true);
    // output.weight, or the token embeddings when the file ties them.
    void output_or_tied(ggml::Tensor*& slot, Shape shape);
    // blk.<il>.<name>: required (req) or optional (opt, slot stays nullptr when absent).
    void req(uint32_t il, ggml::Tensor*& slot, const std::string& name, Shape shape);
    bool opt(uint32_t il, ggml::Tensor*& slot, const std::string& name, Shape shape);
    // A file-wide tensor that every layer reads (rope_freqs.weight), bound to each layer's slot.
    bool shared(uint32_t il, ggml::Tensor*& slot, const std::string& name, Shape shape);

    // The attention projections of layer il: attn_qkv (fused) or attn_q/attn_k/attn_v, each with an
    // optional bias, and attn_output (q width n_head * head size). qkv_biases: the Qwen 2 layout, separate
    // q/k/v projections whose biases are required.
    void attention(uint32_t il, LayerWeights& w, bool qkv_biases = false);
    // The experts of layer il: router and gate/up/down expert tensors with hp.n_expert experts of
    // n_ff_exp rows; their shapes must agree with expert_count.
    void experts(uint32_t il, LayerWeights& w, int64_t n_ff_exp);
    // Their biases, required (gpt-oss): router [n_expert], gate/up [n_ff_exp, n_expert], down
    // [n_embd, n_expert].
    void expert_biases(uint32_t il, LayerWeights& w, int64_t n_ff_exp);
    // Refuses router or expert tensors in a file whose metadata declares no experts (hp.n_expert == 0),
    // naming the first; `experts` is the architecture's declaration (arch.h).
    void refuse_undeclared_experts(Use experts) const;

private:
    ggml::Tensor* tensor(const std::string& name, Shape shape, bool required);
    void bind(ggml::Tensor*& slot, ggml::Tensor* t, int layer);
    static std::string layer_name(uint32_t il, const std::string& name) {
        return "blk." + std::to_string(il) + "." + name;
    }
    std::map<std::string, ggml::Tensor*> loaded_;  // each file tensor becomes one ggml tensor
};

}  // namespace engine
