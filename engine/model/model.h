// A loaded model: hyper-parameters, vocabulary, weights (mmapped, never copied on the CPU) and its row
// of the architecture table (arch/arch.h), which names the weights and builds the forward graph.
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
struct ArchRow;

// The weights of one layer. Each architecture fills what it has; the rest stays nullptr (biases, norms
// of q/k, post-norms, experts, fused projections). Names are those of the GGUF tensors blk.N.<name>.
struct LayerWeights {
    // attention
    ggml::Tensor* attn_norm = nullptr;       // attn_norm.weight
    ggml::Tensor* attn_norm_b = nullptr;     // attn_norm.bias
    ggml::Tensor* wq = nullptr;              // attn_q.weight
    ggml::Tensor* wk = nullptr;              // attn_k.weight
    ggml::Tensor* wv = nullptr;              // attn_v.weight
    ggml::Tensor* wqkv = nullptr;            // attn_qkv.weight: q, k and v rows in one matrix
    ggml::Tensor* bq = nullptr;              // attn_q.bias
    ggml::Tensor* bk = nullptr;              // attn_k.bias
    ggml::Tensor* bv = nullptr;              // attn_v.bias
    ggml::Tensor* bqkv = nullptr;            // attn_qkv.bias
    ggml::Tensor* q_norm = nullptr;          // attn_q_norm.weight: RMS norm of each query head
    ggml::Tensor* k_norm = nullptr;          // attn_k_norm.weight
    ggml::Tensor* q_norm_b = nullptr;        // attn_q_norm.bias (jina-bert-v2: a LayerNorm of all heads)
    ggml::Tensor* k_norm_b = nullptr;        // attn_k_norm.bias
    ggml::Tensor* wo = nullptr;              // attn_output.weight
    ggml::Tensor* bo = nullptr;              // attn_output.bias
    ggml::Tensor* attn_post_norm = nullptr;  // post_attention_norm.weight (gemma2/3; gpt-oss's pre-FFN norm)
    ggml::Tensor* attn_sinks = nullptr;      // attn_sinks.weight: one extra softmax logit per head (gpt-oss)
    // feed-forward
    ggml::Tensor* ffn_norm = nullptr;       // ffn_norm.weight
    ggml::Tensor* ffn_norm_b = nullptr;     // ffn_norm.bias
    ggml::Tensor* w_gate = nullptr;         // ffn_gate.weight
    ggml::Tensor* w_up = nullptr;           // ffn_up.weight
    ggml::Tensor* w_gate_up = nullptr;      // ffn_up.weight holding gate rows then up rows (phi3)
    ggml::Tensor* w_down = nullptr;         // ffn_down.weight
    ggml::Tensor* b_gate = nullptr;         // ffn_gate.bias
    ggml::Tensor* b_up = nullptr;           // ffn_up.bias
    ggml::Tensor* b_down = nullptr;         // ffn_down.bias
    ggml::Tensor* ffn_post_norm = nullptr;  // post_ffw_norm.weight (gemma2/3)
    // post-norm encoders (BERT): LayerNorm after each residual addition
    ggml::Tensor* attn_out_norm = nullptr;     // attn_output_norm.weight
    ggml::Tensor* attn_out_norm_b = nullptr;   // attn_output_norm.bias
    ggml::Tensor* layer_out_norm = nullptr;    // layer_output_norm.weight
    ggml::Tensor* layer_out_norm_b = nullptr;  // layer_output_norm.bias
    ggml::Tensor* attn_norm_2 = nullptr;       // attn_norm_2.weight (jina-bert-v2): LayerNorm of the sum again
    ggml::Tensor* attn_norm_2_b = nullptr;     // attn_norm_2.bias
    // mixture of experts
    ggml::Tensor* router = nullptr;          // ffn_gate_inp.weight: [n_embd, n_expert]
    ggml::Tensor* router_b = nullptr;        // ffn_gate_inp.bias: [n_expert] (gpt-oss)
    ggml::Tensor* w_gate_exps = nullptr;     // ffn_gate_exps.weight: [n_embd, n_ff_exp, n_expert]
    ggml::Tensor* w_up_exps = nullptr;       // ffn_up_exps.weight
    ggml::Tensor* w_down_exps = nullptr;     // ffn_down_exps.weight: [n_ff_exp, n_embd, n_expert]
    ggml::Tensor* b_gate_exps = nullptr;     // ffn_gate_exps.bias: [n_ff_exp, n_expert] (gpt-oss)
    ggml::Tensor* b_up_exps = nullptr;       // ffn_up_exps.bias
    ggml::Tensor* b_down_exps = nullptr;     // ffn_down_exps.bias: [n_embd, n_expert]
    ggml::Tensor* shexp_gate = nullptr;      // ffn_gate_inp_shexp.weight: [n_embd] (qwen2moe)
    ggml::Tensor* w_gate_shexp = nullptr;    // ffn_gate_shexp.weight
    ggml::Tensor* w_up_shexp = nullptr;      // ffn_up_shexp.weight
    ggml::Tensor* w_down_shexp = nullptr;    // ffn_down_shexp.weight
    // RoPE frequency divisors (global tensors, one pointer per layer so that an offloaded layer reads
    // its device's copy)
    ggml::Tensor* rope_freqs = nullptr;  // rope_freqs.weight (Llama 3.1)
    ggml::Tensor* rope_long = nullptr;   // rope_factors_long.weight (LongRoPE)
    ggml::Tensor* rope_short = nullptr;  // rope_factors_short.weight
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
    RopeOverrides rope;  // --rope-scaling, --rope-freq-base, --yarn-* ...
    bool use_mmap = true;    // false: the file is read into memory (--no-mmap)
    bool use_mlock = false;  // lock the weights in RAM (--mlock)
    // Scan every tensor's values for NaN and infinity before use (--check-tensors); a bad tensor is a
    // load error naming it.
    bool check_tensors = false;
    // Metadata replaced before the model reads it (--override-kv KEY=TYPE:VALUE).
    std::vector<std::pair<std::string, ggml::gguf::Value>> kv_overrides;
};

// The first non-finite value of each tensor of f (check_tensors); empty when all are finite. Each entry
// names the tensor, the element index and the value.
std::vector<std::string> find_invalid_tensor_values(const ggml::gguf::File& f);

class Model {
public:
    // Opens and validates a GGUF model and places its weights. Throws std::runtime_error (or a subclass,
    // such as ggml::Error when the offload device cannot be used) with a clear message.
    static std::unique_ptr<Model> load(const std::string& path, const ModelParams& params = {});
    ~Model();

    const HParams& hparams() const { return hp_; }
    const ArchRow& arch() const { return *arch_; }
    const Vocab& vocab() const { return *vocab_; }
    const ggml::gguf::File& gguf() const { return *file_; }
    const std::string& path() const { return path_; }

    ggml::Tensor* tok_embd = nullptr;
    ggml::Tensor* output_norm = nullptr;
    ggml::Tensor* output_norm_b = nullptr;
    ggml::Tensor* output = nullptr;  // tok_embd when the model ties embeddings
    ggml::Tensor* output_b = nullptr;
    // Encoders (BERT): token-type and absolute position embeddings, the LayerNorm of the input embeddings,
    // and a reranker's classification head (rank pooling): cls (dense, then tanh; optional) and cls_out
    // (the score rows), read on the host; nullptr in plain embedding models. An encoder has no output
    // matrix: its graph returns the final hidden states.
    ggml::Tensor* tok_types = nullptr;   // token_types.weight [n_embd, n_token_types]
    ggml::Tensor* pos_embd = nullptr;    // position_embd.weight [n_embd, n_ctx_train]
    ggml::Tensor* tok_norm = nullptr;    // token_embd_norm.weight
    ggml::Tensor* tok_norm_b = nullptr;  // token_embd_norm.bias
    ggml::Tensor* cls = nullptr;         // cls.weight [n_embd, n_embd]
    ggml::Tensor* cls_b = nullptr;       // cls.bias
    ggml::Tensor* cls_out = nullptr;     // cls.output.weight [n_embd, n_cls_out]
    ggml::Tensor* cls_out_b = nullptr;   // cls.output.bias
    // Rows of the graph's result per output token: n_vocab (logits), or n_embd for encoders.
    uint32_t n_out_width() const { return output ? hp_.n_vocab : hp_.n_embd; }
    std::vector<LayerWeights> layers;

    uint64_t n_params() const { return n_params_; }
    uint64_t n_bytes() const { return n_bytes_; }  // weight bytes
    // e.g. "llama 7B Q4_0": architecture, size class and the dominant weight type.
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
    // Bytes of the file locked in RAM (--mlock; 0 when not asked or when it failed: lock_error()).
    size_t locked_bytes() const { return file_->locked_bytes(); }
    const std::string& lock_error() const { return file_->lock_error(); }
    bool mapped() const { return file_->mapped(); }
    // A sleeping server (--sleep-idle-seconds): the weights' host pages go back to the OS, and come back
    // before the next decode (restore_memory throws std::runtime_error when the file cannot be read again).
    // Offloaded weights stay on their device; the vocabulary and metadata stay. Returns the bytes given back.
    size_t release_memory() const { return file_->release_pages(); }
    void restore_memory() const { file_->restore_pages(); }

    // A model pointer bound to a weight. layer >= 0: a tensor of that layer (blk.N.*); kInputSlot: read
    // on the host (token embeddings); kOutputSlot: the output head (output_norm, output).
    struct WeightSlot {
        ggml::Tensor** slot;
        int layer;
    };
    static constexpr int kInputSlot = -1, kOutputSlot = -2;
    const std::vector<WeightSlot>& weight_slots() const { return slots_; }

private:
    friend class WeightLoader;
    Model() = default;
    // Uploads the weights that params puts on the offload backend (model_offload.cpp).
    void offload(const ModelParams& params);

    std::string path_;
    HParams hp_;
    const ArchRow* arch_ = nullptr;
    std::unique_ptr<ggml::gguf::File> file_;
    std::unique_ptr<Vocab> vocab_;
    ggml::Context ctx_{0, true};
    std::vector<WeightSlot> slots_;
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
