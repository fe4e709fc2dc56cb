// The K-shift pass: after seq_add moved cells to new positions, their stored keys still carry the
// rotation of the old position. RoPE composes additively, so rotating each stored key by its cell's
// pending shift gives the key of the new position. Quantized keys are dequantized, rotated and
// quantized again with the cache type's reference quantizer.
#pragma once

#include <vector>

#include "engine/model/batch.h"
#include "engine/model/graph_runner.h"
#include "engine/model/kv_cache.h"
#include "engine/model/model.h"

namespace engine {

// Re-rotates the keys of every cell with a pending shift (all layers, each with its own RoPE, one graph)
// and clears the shifts. Does nothing when none is pending. long_rope as the context's graphs use it.
void apply_k_shift(const Model& model, KvCache& kv, GraphRunner& runner, int n_threads, bool long_rope);

// Context shift of a sequence whose cells hold tokens[i] at position i: keeps the first n_keep
// tokens, discards n_discard of the rest (0: half of them) and moves the remainder down (metadata
// only; the keys are re-rotated before the next compute). tokens is edited to match. Returns the
// number discarded. Throws std::runtime_error, changing nothing, when moved cells shared with other
// sequences cannot be copied for lack of free cells.
int32_t shift_context(KvCache& kv, SeqId seq, std::vector<Token>& tokens, int32_t n_keep, int32_t n_discard = 0);

}  // namespace engine
