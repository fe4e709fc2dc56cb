// Embeddings of a batch of token sequences: the engine-level API behind /v1/embeddings (no HTTP here).
// Sequences are packed into decode calls of at most n_ubatch tokens, each sequence whole inside one
// micro-batch (an encoder attends over the whole sequence at once, so it cannot be split), each under
// its own sequence id; their cache cells are released afterwards.
#pragma once

#include <vector>

#include "engine/model/context.h"
#include "engine/model/pooling.h"

namespace engine {

struct EmbedOptions {
    Pooling pooling = Pooling::Unspecified;  // Unspecified: the model's pooling_type (none if it has none)
    int normalize = 2;                       // embd_normalize of pooled vectors (pooling none: raw rows)
    // The sequence ids this call may use, each holding no cells; empty: every id of the context.
    std::vector<SeqId> seqs;
};

// The pooling a request gets: the requested one, else the model's, else none.
Pooling effective_pooling(const Model& m, Pooling requested);

// The longest input embed() accepts: n_ubatch (and the model's training context).
size_t max_embed_tokens(const Model& m, uint32_t n_ubatch);
inline size_t max_embed_tokens(const Context& ctx) { return max_embed_tokens(ctx.model(), ctx.params().n_ubatch); }

// For each input: one pooled, normalized vector (mean, cls, last), or one raw hidden-state row per token
// (none). Throws InvalidBatch for an empty input, a bad token id or an input longer than
// max_embed_tokens(), std::invalid_argument for a model that is not an encoder or rank pooling (a
// reranker's classification head is not supported), std::runtime_error when the cache has no room.
std::vector<std::vector<std::vector<float>>> embed(Context& ctx, const std::vector<std::vector<Token>>& inputs,
                                                   const EmbedOptions& opts);

}  // namespace engine
