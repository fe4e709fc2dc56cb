// Embeddings of a batch of token sequences: the engine-level API behind /v1/embeddings (no HTTP here).
// Sequences are packed into decode calls of at most n_ubatch tokens, each sequence whole inside one
// micro-batch (an encoder attends over the whole sequence at once, so it cannot be split), each under
// its own sequence id; their cache cells are released afterwards.
#pragma once

#include <string>
#include <vector>

#include "engine/model/context.h"
#include "engine/model/pooling.h"

namespace engine {

struct EmbedOptions {
    Pooling pooling = Pooling::Unspecified;  // Unspecified: the model's pooling_type (none if it has none)
    int normalize = 2;                       // embd_normalize of pooled vectors (pooling none: raw rows)
    // The sequence ids this call may use, each holding no cells; empty: every id of the context.
    std::vector<SeqId> seqs;
    size_t* decode_calls = nullptr;  // when set, counts the decode calls made (for the server's metrics)
};

// The pooling a request gets: the requested one, else the model's, else none.
Pooling effective_pooling(const Model& m, Pooling requested);

// The longest input embed() accepts: one micro-batch (n_ubatch), bounded by the KV cells (n_ctx; 0: the
// model's training context) and the training context (the position embeddings).
size_t max_embed_tokens(const Model& m, uint32_t n_ubatch, uint32_t n_ctx);
inline size_t max_embed_tokens(const Context& ctx) {
    return max_embed_tokens(ctx.model(), ctx.params().n_ubatch, ctx.n_ctx());
}
// The message for an input of n tokens over that limit, naming the setting to raise (-ub or -c).
std::string embed_too_long(size_t n, const Model& m, uint32_t n_ubatch, uint32_t n_ctx);

// One input's result from its tokens' final hidden states (rows: n x n_embd): as embed() returns it.
std::vector<std::vector<float>> embedding_of_rows(const Model& m, const float* rows, size_t n, Pooling pooling,
                                                  int normalize);

// A reranker's scores from the first ([CLS]) token's hidden state: cls_out tanh(cls h + cls_b) + cls_out_b
// (without cls: cls_out h + cls_out_b), as llama.cpp's rank pooling. std::invalid_argument without a head.
std::vector<float> rank_scores(const Model& m, const std::vector<float>& h_cls);

// For each input: one pooled, normalized vector (mean, cls, last), the classification head's scores (rank,
// not normalized), or one raw hidden-state row per token (none). Throws InvalidBatch for an empty input, a
// bad token id or an input longer than max_embed_tokens(), std::invalid_argument for a model that is not an
// encoder or rank pooling without a classification head, std::runtime_error when the cache has no room.
std::vector<std::vector<std::vector<float>>> embed(Context& ctx,
                                                   const std::vector<std::vector<Token>>& inputs,
                                                   const EmbedOptions& opts);

}  // namespace engine
