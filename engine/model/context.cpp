#include "engine/model/context.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "engine/model/kv_shift.h"
#include "engine/model/arch/arch.h"
#include "engine/model/graph_builder.h"
#include "engine/tokenizer/vocab.h"

namespace engine {

Context::Context(const Model& model, const ContextParams& params) : model_(model), params_(params) {
    const HParams& hp = model.hparams();
    if (params_.n_ctx == 0) params_.n_ctx = hp.n_ctx_train;
    if (params_.n_batch == 0 || params_.n_ubatch == 0)
        throw std::invalid_argument("n_batch and n_ubatch must be positive");
    params_.n_ubatch = std::min(params_.n_ubatch, params_.n_batch);
    if (params_.n_seq_max == 0 || params_.n_seq_max > (uint32_t)kMaxSeq)
        throw std::invalid_argument("n_seq_max must be in [1, " + std::to_string(kMaxSeq) + "]");
    const int hw = (int)std::max(1u, std::thread::hardware_concurrency());
    if (params_.n_threads <= 0) params_.n_threads = hw;
    if (params_.n_threads_batch <= 0) params_.n_threads_batch = params_.n_threads;
    const bool quantized_v = ggml::type_traits(params_.type_v).is_quantized;
    if (quantized_v && !params_.flash_attn)
        throw std::invalid_argument(std::string("a quantized V cache (") + ggml::type_name(params_.type_v) +
                                    ") requires flash attention (-fa)");
    backend_ = ggml::make_cpu_backend(std::max(params_.n_threads, params_.n_threads_batch), params_.cpu);
    std::vector<ggml::Backend*> layer_backends;
    for (uint32_t il = 0; il < hp.n_layer; ++il)
        layer_backends.push_back(params_.offload_kqv ? model.layer_backend(il) : nullptr);
    kv_ = std::make_unique<KvCache>(hp, params_.n_ctx, params_.type_k, params_.type_v, *backend_,
                                    layer_backends);
    runner_ = std::make_unique<GraphRunner>(*backend_, model.offload_backend());
    // LongRoPE's long factors apply once a sequence's share of the context exceeds the original context.
    long_rope_ = (params_.kv_unified ? params_.n_ctx : params_.n_ctx / params_.n_seq_max) > hp.n_ctx_orig;
    lora_scales_.assign(params_.n_seq_max, std::vector<float>(params_.lora.size(), 0.0f));
}

Context::~Context() = default;

void Context::validate(const Batch& b) const {
    const size_t n = b.tokens.size();
    if (n == 0) throw InvalidBatch("empty batch");
    if (b.pos.size() != n || b.seq_ids.size() != n || b.logits.size() != n)
        throw InvalidBatch("batch arrays have different lengths");
    if (n > params_.n_batch)
        throw InvalidBatch("batch of " + std::to_string(n) + " tokens exceeds n_batch " +
                           std::to_string(params_.n_batch));
    const int n_vocab = (int)model_.hparams().n_vocab;
    for (size_t i = 0; i < n; ++i) {
        if (b.tokens[i] < 0 || b.tokens[i] >= n_vocab)
            throw InvalidBatch("token id " + std::to_string(b.tokens[i]) + " is out of the vocabulary");
        if (b.pos[i] < 0) throw InvalidBatch("negative position");
        if (b.seq_ids[i].empty()) throw InvalidBatch("token without a sequence id");
        for (SeqId s : b.seq_ids[i])
            if (s < 0 || (uint32_t)s >= params_.n_seq_max)
                throw InvalidBatch("sequence id " + std::to_string(s) + " is out of range");
    }
}

void Context::set_lora_scales(SeqId seq, std::vector<float> scales) {
    if (seq < 0 || (size_t)seq >= lora_scales_.size())
        throw std::invalid_argument("LoRA scales: sequence id " + std::to_string(seq) + " out of range");
    if (scales.size() != params_.lora.size())
        throw std::invalid_argument("LoRA scales: " + std::to_string(scales.size()) + " given, the context has " +
                                    std::to_string(params_.lora.size()) + " adapters");
    lora_scales_[(size_t)seq] = std::move(scales);
}

const std::vector<float>& Context::lora_scales(SeqId seq) const {
    return lora_scales_.at((size_t)seq);
}

void Context::apply_kv_shift() {
    apply_k_shift(model_, *kv_, *runner_, params_.n_threads_batch, long_rope_);
}

size_t Context::warmup() {
    const Vocab& vocab = model_.vocab();
    Batch b;
    const bool eos = vocab.eos() >= 0;
    b.add(vocab.bos() >= 0 ? vocab.bos() : 0, 0, {0}, !eos);
    if (eos) b.add(vocab.eos(), 1, {0}, true);
    Status st;
    try {
        st = decode(b);
    } catch (...) {
        kv().seq_rm(0, -1, -1);
        throw;
    }
    kv().seq_rm(0, -1, -1);
    if (st != Status::Ok) throw std::runtime_error("the warmup batch found no room in the cache");
    return b.size();
}

Context::Status Context::decode(const Batch& batch) {
    validate(batch);
    apply_kv_shift();
    const size_t n = batch.size();
    const uint32_t n_vocab = out_width();  // hidden states for encoders and embeddings contexts
    const uint32_t n_embd = model_.hparams().n_embd;
    // A context that computes logits keeps kOutHidden tokens' hidden states apart; an embeddings context
    // (or an encoder) hands out hidden states as its "logits" for every output token.
    const bool split = splits_hidden();
    size_t n_out = 0, n_hid = 0;
    logit_row_.assign(n, -1);
    hidden_row_.assign(n, -1);
    for (size_t i = 0; i < n; ++i) {
        if (split && batch.logits[i] == kOutHidden)
            hidden_row_[i] = (int32_t)n_hid++;
        else if (batch.logits[i])
            logit_row_[i] = (int32_t)n_out++;
    }
    logits_.resize(n_out * n_vocab);
    hidden_.resize(n_hid * n_embd);
    size_t logit_rows = 0, hidden_rows = 0;  // rows written by the micro-batches so far

    std::vector<int32_t> placed;  // cells written by this batch, undone on failure
    std::vector<int32_t> cells;
    for (size_t start = 0; start < n; start += params_.n_ubatch) {
        const uint32_t len = (uint32_t)std::min<size_t>(params_.n_ubatch, n - start);
        if (!kv_->find_free(len, &batch.seq_ids[start], cells)) {
            for (int32_t c : placed) kv_->release(c);  // these cells held only this batch's tokens
            return Status::NoKvSpace;
        }
        for (uint32_t i = 0; i < len; ++i)
            kv_->occupy(cells[i], batch.pos[start + i], batch.seq_ids[start + i]);
        placed.insert(placed.end(), cells.begin(), cells.end());
        UBatchView ub{&batch.tokens[start], &batch.pos[start], &batch.seq_ids[start], &batch.logits[start],
                      len};
        compute_ubatch(ub, cells, logits_.data() + logit_rows * n_vocab, hidden_.data() + hidden_rows * n_embd);
        for (size_t i = start; i < start + len; ++i) {
            logit_rows += logit_row_[i] >= 0;
            hidden_rows += hidden_row_[i] >= 0;
        }
    }
    return Status::Ok;
}

void Context::compute_ubatch(const UBatchView& ub, const std::vector<int32_t>& cells, float* logits_out,
                             float* hidden_out) {
    // Output rows: every token that wants logits or its hidden state; logit_sel: which of them want logits.
    const bool split = splits_hidden();
    std::vector<int32_t> out_ids, logit_sel;
    for (uint32_t i = 0; i < ub.n; ++i) {
        if (!ub.want_logits[i]) continue;
        if (!(split && ub.want_logits[i] == kOutHidden)) logit_sel.push_back((int32_t)out_ids.size());
        out_ids.push_back((int32_t)i);
    }
    const bool any_out = !out_ids.empty();
    if (!any_out) out_ids.push_back((int32_t)ub.n - 1);  // the graph needs one output row; discarded
    const bool any_hidden = any_out && logit_sel.size() < out_ids.size();

    const HParams& hp = model_.hparams();
    GraphShape shape{ub.n, (uint32_t)out_ids.size(), kv_->n_kv(), params_.flash_attn, long_rope_};
    shape.n_logit_rows = any_hidden ? (uint32_t)logit_sel.size() : shape.n_outputs;
    ggml::Context gctx(0, true);
    GraphBuilder builder(gctx, model_, *kv_, shape);
    GraphInputs& in = builder.in;
    builder.cvec = params_.cvec;
    // Adapters some token of this micro-batch uses: a token takes its (first) sequence's scales.
    std::vector<std::vector<float>> lora_token_scales;
    for (size_t a = 0; a < params_.lora.size(); ++a) {
        std::vector<float> sc(ub.n);
        bool any = false;
        for (uint32_t i = 0; i < ub.n; ++i) {
            sc[i] = lora_scales_[(size_t)ub.seqs[i].front()][a];
            any |= sc[i] != 0.0f;
        }
        if (!any) continue;
        builder.add_lora(params_.lora[a]);
        lora_token_scales.push_back(std::move(sc));
    }
    in.logits = model_.arch().build_graph(builder);
    if (params_.embeddings && builder.hidden) in.logits = builder.hidden;  // the state the output matrix reads
    // Hidden states beside logits: both are outputs of the graph (the logits of the selected rows only).
    ggml::Tensor* hidden = any_hidden ? builder.hidden : nullptr;
    if (any_hidden && logit_sel.empty()) in.logits = nullptr;
    ggml::Graph g;
    if (in.logits) {
        in.logits->flags |= ggml::kFlagOutput;
        in.logits->set_name("logits");
        g.build_forward(in.logits);
    }
    if (hidden) {
        hidden->flags |= ggml::kFlagOutput;
        g.build_forward(hidden);
    }
    runner_->allocate(g);

    std::memcpy(in.tokens->data, ub.tokens, ub.n * sizeof(int32_t));
    if (in.pos->data)  // unused (and unallocated) without RoPE or position embeddings (ALiBi)
        std::memcpy(in.pos->data, ub.pos, ub.n * sizeof(int32_t));
    std::memcpy(in.kv_cells->data, cells.data(), ub.n * sizeof(int32_t));
    if (in.out_ids->data)  // unused (and unallocated) when every token wants logits
        std::memcpy(in.out_ids->data, out_ids.data(), out_ids.size() * sizeof(int32_t));
    if (in.logit_sel && in.logit_sel->data)
        std::memcpy(in.logit_sel->data, logit_sel.data(), logit_sel.size() * sizeof(int32_t));
    const std::vector<KvCache::SeqSet> owners = kv_->block_seqs(shape.n_kv);  // shared by the three inputs
    if (in.mask->data)  // unused when every layer has a sliding window
        kv_->fill_mask(ub.pos, ub.seqs, ub.n, shape.n_kv, (float*)in.mask->data, hp.causal, 0, &owners);
    if (in.mask->data && hp.max_alibi_bias > 0.0f)
        kv_->apply_alibi(ub.pos, ub.n, shape.n_kv, (float*)in.mask->data, hp.n_head, hp.max_alibi_bias);
    if (in.mask_swa)
        kv_->fill_mask(ub.pos, ub.seqs, ub.n, shape.n_kv, (float*)in.mask_swa->data, hp.causal, hp.n_swa, &owners);
    if (in.kv_blocks->data)  // unused when no layer's attention runs on the CPU
        kv_->fill_blocks(ub.pos, ub.seqs, ub.n, shape.n_kv, (int32_t*)in.kv_blocks->data,
                         (size_t)in.kv_blocks->ne[0], hp.causal, &owners);

    for (size_t k = 0; k < builder.lora.size(); ++k) {
        const LoraInput& l = builder.lora[k];
        const std::vector<float>& sc = lora_token_scales[k];
        if (l.scale->data) std::memcpy(l.scale->data, sc.data(), ub.n * sizeof(float));
        if (l.scale_out->data)
            for (size_t j = 0; j < out_ids.size(); ++j) ((float*)l.scale_out->data)[j] = sc[(size_t)out_ids[j]];
    }

    runner_->compute(g, ub.n == 1 ? params_.n_threads : params_.n_threads_batch);
    if (any_out && in.logits)  // the logits may live on the offload backend
        ggml::tensor_get(in.logits, logits_out, 0, (size_t)shape.n_logit_rows * out_width() * sizeof(float));
    if (hidden) {  // rows of every output token: keep those that asked for their hidden state
        const size_t n_embd = hp.n_embd;
        std::vector<float> rows(out_ids.size() * n_embd);
        ggml::tensor_get(hidden, rows.data(), 0, rows.size() * sizeof(float));
        size_t h = 0, sel = 0;
        for (size_t j = 0; j < out_ids.size(); ++j) {
            if (sel < logit_sel.size() && logit_sel[sel] == (int32_t)j) {
                ++sel;
                continue;
            }
            std::copy_n(rows.begin() + (std::ptrdiff_t)(j * n_embd), n_embd, hidden_out + (h++) * n_embd);
        }
    }
}

const float* Context::hidden(size_t i) const {
    if (i >= hidden_row_.size() || hidden_row_[i] < 0)
        throw std::out_of_range("no hidden state for batch token " + std::to_string(i));
    return hidden_.data() + (size_t)hidden_row_[i] * model_.hparams().n_embd;
}

const float* Context::logits(size_t i) const {
    if (i >= logit_row_.size() || logit_row_[i] < 0)
        throw std::out_of_range("no logits for batch token " + std::to_string(i));
    return logits_.data() + (size_t)logit_row_[i] * out_width();
}

}  // namespace engine
