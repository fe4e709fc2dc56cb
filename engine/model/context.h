// An inference context: a model, a KV cache and the CPU backend (plus the model's offload backend when
// it has offloaded layers). decode() evaluates a batch of tokens of any number of sequences, split into
// micro-batches, and keeps the logits of the tokens that asked for them.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/batch.h"
#include "engine/model/control_vector.h"
#include "engine/model/graph_runner.h"
#include "engine/model/kv_cache.h"
#include "engine/model/lora.h"
#include "engine/model/model.h"
#include "ggml/backend.h"

namespace engine {

struct ContextParams {
    uint32_t n_ctx = 0;       // KV cells; 0 = the model's training context
    uint32_t n_batch = 2048;  // most tokens one decode() call accepts
    uint32_t n_ubatch = 512;  // tokens per physical micro-batch
    uint32_t n_seq_max = 1;   // sequence ids must be < this
    // Every sequence may use the whole context (llama.cpp's kv_unified) rather than n_ctx / n_seq_max:
    // LongRoPE then picks its factors from n_ctx.
    bool kv_unified = false;
    int n_threads = 0;        // single-token decode threads; 0 = hardware concurrency
    int n_threads_batch = 0;  // prompt threads; 0 = n_threads
    bool flash_attn = false;
    // Embeddings: each output row is the final hidden state (after the output norm, n_embd floats) instead
    // of the logits; a decoder used as an embedder (an encoder's rows are hidden states either way).
    bool embeddings = false;
    ggml::Type type_k = ggml::Type::F16;
    ggml::Type type_v = ggml::Type::F16;
    // LoRA adapters this context can apply (their order gives the ids of set_lora_scales' vectors). They
    // must outlive the context.
    std::vector<const LoraAdapter*> lora;
    // Control vectors added to the layers' outputs for every token (nullptr: none); must outlive the context.
    const ControlVector* cvec = nullptr;
    // KV cache of offloaded layers on their device (llama-server's -nkvo turns it off: the cache stays in
    // host memory and attention runs on the CPU, the device computes the rest of each layer).
    bool offload_kqv = true;
    ggml::CpuThreadOptions cpu;  // placement and polling of the CPU threads
};

// Invalid input to decode() (bad token id, position, sequence id): the caller's fault, nothing changed.
struct InvalidBatch : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

struct DecodeTimings {
    double ms = 0.0;
    uint32_t n_tokens = 0;
};

class Context {
  public:
    Context(const Model& model, const ContextParams& params);
    ~Context();

    enum class Status { Ok, NoKvSpace };
    // Evaluates the batch. On NoKvSpace nothing of the batch remains in the cache. Pending position
    // shifts of the cache (KvCache::seq_add) are applied to the stored keys first.
    Status decode(const Batch& batch);
    // Evaluates a short batch (BOS, EOS) in sequence 0 and removes it from the cache again, so that the
    // first real batch does not pay for weights paged in from disk. Returns its number of tokens; throws
    // what decode() throws, or std::runtime_error when the batch found no room.
    size_t warmup();
    // The adapters' scales for a sequence's tokens (one per ContextParams::lora entry; 0: not applied),
    // from the next decode on; every sequence starts with all zeros. Tokens of a sequence evaluated
    // earlier keep what they were computed with (the caller decides when a cached prefix is reusable).
    void set_lora_scales(SeqId seq, std::vector<float> scales);
    const std::vector<float>& lora_scales(SeqId seq) const;
    // Applies pending position shifts now (before reading or saving the cache's keys).
    void apply_kv_shift();
    // From the next decode on, hidden states (true) or logits (false) come out: a server that generates
    // switches for its embedding requests' decode calls, as ContextParams::embeddings would.
    void set_embeddings(bool on) { params_.embeddings = on; }

    // Logits of the i-th token of the last batch (which must have asked for them); for an encoder (no
    // output matrix) or an embeddings context its final hidden state: out_width() floats (also for tokens
    // added with Batch::add_hidden there).
    const float* logits(size_t i) const;
    // The final hidden state (n_embd floats) of the i-th token of the last batch, added with
    // Batch::add_hidden, in a context that computes logits: the same call gives other tokens' logits.
    const float* hidden(size_t i) const;
    int n_vocab() const { return (int)model_.hparams().n_vocab; }
    uint32_t out_width() const { return params_.embeddings ? model_.hparams().n_embd : model_.n_out_width(); }
    // Whether kOutHidden tokens get hidden states apart from the logits (a context that computes logits).
    bool splits_hidden() const { return !params_.embeddings && model_.output != nullptr; }
    uint32_t n_ctx() const { return kv_->size(); }
    const ContextParams& params() const { return params_; }
    const Model& model() const { return model_; }
    KvCache& kv() { return *kv_; }
    const KvCache& kv() const { return *kv_; }
    ggml::Backend& backend() { return *backend_; }

  private:
    struct UBatchView {
        const Token* tokens;
        const Pos* pos;
        const std::vector<SeqId>* seqs;
        const uint8_t* want_logits;
        uint32_t n;
    };
    void validate(const Batch& batch) const;
    void compute_ubatch(const UBatchView& ub, const std::vector<int32_t>& cells, float* logits_out,
                        float* hidden_out);

    const Model& model_;
    ContextParams params_;
    std::unique_ptr<ggml::CpuBackend> backend_;
    std::unique_ptr<KvCache> kv_;
    std::unique_ptr<GraphRunner> runner_;
    std::vector<float> logits_;
    std::vector<int32_t> logit_row_;  // batch index -> row in logits_ (-1: none)
    std::vector<float> hidden_;        // hidden states of kOutHidden tokens (a context with logits)
    std::vector<int32_t> hidden_row_;  // batch index -> row in hidden_ (-1: none)
    bool long_rope_ = false;
    std::vector<std::vector<float>> lora_scales_;  // [seq][adapter]
};

}  // namespace engine
