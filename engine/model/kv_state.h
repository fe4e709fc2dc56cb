// Sequence states: one sequence of the KV cache (its tokens, cell positions and the K/V rows of every
// layer) saved and restored later: to files by `ggserve run --prompt-cache` and the server's
// /slots/{id}?action=save|restore, to memory by the server's host-memory prompt cache (--cache-ram).
// Both use the same bytes: a file holds exactly what seq_state_bytes returns.
//
// Layout (little-endian): magic "GGKVSEQ\0", u32 version, u64 model fingerprint, i32 type_k, i32
// type_v, u32 n_layer, u32 n_embd_k_gqa, u32 n_embd_v_gqa, u32 n_tokens, i32 tokens[n_tokens], i32
// positions[n_tokens] (0..n_tokens-1), then per layer the K rows and the V rows of those cells.
// Loading checks every field against the running context and the size against the header before
// anything in the cache changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/context.h"
#include "engine/model/model.h"

namespace engine {

constexpr uint32_t kStateVersion = 1;

// A state file that cannot be written, read or trusted; the message says why.
struct StateFileError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Identifies a model file as loaded: tensor names, types and shapes, sampled weight bytes and the
// hyper-parameters (RoPE after the user's overrides: keys rotated differently cannot be reused).
// Computed once per model (cheap: it reads a few bytes per tensor).
uint64_t model_fingerprint(const Model& model);

// The state of sequence seq, which must hold exactly tokens at positions 0..tokens.size()-1, as bytes.
// Pending key shifts are applied first.
std::vector<uint8_t> seq_state_bytes(Context& ctx, SeqId seq, const std::vector<Token>& tokens);

// The size of seq_state_bytes for a sequence of n_tokens in this context.
size_t seq_state_size(const Context& ctx, size_t n_tokens);

// Writes seq_state_bytes to path (through a temporary file renamed at the end). Returns the bytes written.
size_t save_seq_state(Context& ctx, SeqId seq, const std::vector<Token>& tokens, const std::string& path);

struct LoadedState {
    std::vector<Token> tokens;
    size_t n_bytes = 0;
};

// Replaces sequence seq with the first n_keep tokens (all when larger) of a state made by
// seq_state_bytes; `source` names it in errors. States with more than max_tokens tokens are refused.
// On any error (StateFileError) the cache is unchanged. The returned tokens are the ones restored.
LoadedState restore_seq_state(Context& ctx, SeqId seq, const uint8_t* data, size_t size, size_t max_tokens,
                              const std::string& source, size_t n_keep = SIZE_MAX);

// Replaces sequence seq with the state in path (restore_seq_state of the file's bytes); the file's size
// is checked against its header before the rest is read.
LoadedState load_seq_state(Context& ctx, SeqId seq, const std::string& path, size_t max_tokens);

}  // namespace engine
