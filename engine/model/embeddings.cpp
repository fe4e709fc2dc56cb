#include "engine/model/embeddings.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace engine {

namespace {

// y = W x (+ b): W [n_in, n_out] of any readable type on the host, one dequantized row at a time.
std::vector<float> matvec(const ggml::Tensor* w, const ggml::Tensor* b, const std::vector<float>& x) {
    const int64_t n_in = w->ne[0], n_out = w->ne[1];
    std::vector<float> row((size_t)n_in), y((size_t)n_out);
    std::vector<float> bias((size_t)n_out, 0.0f);
    if (b) ggml::type_traits(b->type).to_float(b->data, bias.data(), n_out);
    for (int64_t r = 0; r < n_out; ++r) {
        ggml::type_traits(w->type).to_float((const char*)w->data + r * w->nb[1], row.data(), n_in);
        double s = 0.0;
        for (int64_t i = 0; i < n_in; ++i) s += (double)row[(size_t)i] * x[(size_t)i];
        y[(size_t)r] = (float)s + bias[(size_t)r];
    }
    return y;
}

}  // namespace

std::vector<float> rank_scores(const Model& m, const std::vector<float>& h_cls) {
    if (!m.cls_out)
        throw std::invalid_argument(
            "rank pooling needs a classification head (cls.output), which this model lacks");
    std::vector<float> x = h_cls;
    if (m.cls) {
        x = matvec(m.cls, m.cls_b, x);
        for (float& v : x) v = std::tanh(v);
    }
    return matvec(m.cls_out, m.cls_out_b, x);
}

Pooling effective_pooling(const Model& m, Pooling requested) {
    if (requested != Pooling::Unspecified) return requested;
    const int t = m.hparams().pooling_type;
    return t >= 0 ? (Pooling)t : Pooling::None;
}

size_t max_embed_tokens(const Model& m, uint32_t n_ubatch, uint32_t n_ctx) {
    const uint32_t train = m.hparams().n_ctx_train;
    return std::min({n_ubatch, train, n_ctx > 0 ? n_ctx : train});
}

std::string embed_too_long(size_t n, const Model& m, uint32_t n_ubatch, uint32_t n_ctx) {
    const size_t limit = max_embed_tokens(m, n_ubatch, n_ctx);
    std::string why;
    if (limit == n_ubatch)
        why = "an embedding input must fit one micro-batch: raise -ub (--ubatch-size)";
    else if (limit == m.hparams().n_ctx_train)
        why = "the model's training context (its position embeddings) ends there";
    else
        why = "the context has no more cells: raise -c (--ctx-size)";
    return "input of " + std::to_string(n) + " tokens exceeds the limit of " + std::to_string(limit) +
           " tokens; " + why;
}

std::vector<std::vector<float>> embedding_of_rows(const Model& m, const float* rows, size_t n, Pooling pooling,
                                                  int normalize) {
    const size_t n_embd = m.hparams().n_embd;
    std::vector<std::vector<float>> out;
    if (pooling == Pooling::None) {
        for (size_t t = 0; t < n; ++t) out.emplace_back(rows + t * n_embd, rows + (t + 1) * n_embd);
    } else if (pooling == Pooling::Rank) {
        out.push_back(rank_scores(m, pool_rows(rows, n, n_embd, Pooling::Cls)));
    } else {
        std::vector<float> v = pool_rows(rows, n, n_embd, pooling);
        normalize_embedding(v, normalize);
        out.push_back(std::move(v));
    }
    return out;
}

std::vector<std::vector<std::vector<float>>> embed(Context& ctx,
                                                   const std::vector<std::vector<Token>>& inputs,
                                                   const EmbedOptions& opts) {
    const Model& m = ctx.model();
    if (m.output && !ctx.params().embeddings)
        throw std::invalid_argument(
            "the model is not an embedding (encoder) model, and the context was not made "
            "for embeddings");
    const Pooling pooling = effective_pooling(m, opts.pooling);
    if (pooling == Pooling::Rank && !m.cls_out)
        throw std::invalid_argument(
            "rank pooling needs a classification head (cls.output), which this model lacks");
    const size_t limit = max_embed_tokens(ctx), n_embd = m.hparams().n_embd;
    std::vector<SeqId> seqs = opts.seqs;
    if (seqs.empty())
        for (uint32_t s = 0; s < ctx.params().n_seq_max; ++s) seqs.push_back((SeqId)s);
    for (SeqId s : seqs)
        if (s < 0 || (uint32_t)s >= ctx.params().n_seq_max)
            throw std::invalid_argument("embed: sequence id " + std::to_string(s) +
                                        " is out of the context's range");
    for (const auto& in : inputs) {
        if (in.empty()) throw InvalidBatch("an input has no tokens");
        if (in.size() > limit)
            throw InvalidBatch(embed_too_long(in.size(), m, ctx.params().n_ubatch, ctx.n_ctx()));
    }

    std::vector<std::vector<std::vector<float>>> out(inputs.size());
    size_t next = 0;
    while (next < inputs.size()) {
        // One decode call: whole inputs while they fit one micro-batch and the sequence ids last.
        Batch b;
        std::vector<size_t> group;
        while (next < inputs.size() && group.size() < seqs.size() &&
               b.size() + inputs[next].size() <= limit) {
            const SeqId s = seqs[group.size()];
            for (size_t i = 0; i < inputs[next].size(); ++i) b.add(inputs[next][i], (Pos)i, {s}, true);
            group.push_back(next++);
        }
        struct Release {  // the group's cells leave the cache however this call ends
            Context& c;
            const std::vector<SeqId>& seqs;
            size_t n;
            ~Release() {
                for (size_t g = 0; g < n; ++g) c.kv().seq_rm(seqs[g], 0, -1);
            }
        } release{ctx, seqs, group.size()};
        if (opts.decode_calls) ++*opts.decode_calls;
        if (ctx.decode(b) != Context::Status::Ok)
            throw std::runtime_error("no KV cache space for " + std::to_string(b.size()) + " tokens");
        size_t row = 0;
        for (size_t idx : group) {
            const size_t n = inputs[idx].size();
            std::vector<float> rows((size_t)n * n_embd);
            for (size_t t = 0; t < n; ++t)
                std::copy_n(ctx.logits(row + t), n_embd, rows.begin() + t * n_embd);
            row += n;
            out[idx] = embedding_of_rows(m, rows.data(), n, pooling, opts.normalize);
        }
    }
    return out;
}

}  // namespace engine
