// The KV cache: one unified set of cells shared by all sequences. A cell holds a position, a pending
// shift and the set of sequences that contain it; the attention mask comes from membership and
// causality. Sequence operations change cell metadata only, except that shifting a cell that other
// sequences share first gives the shifted sequence its own copy (copy-on-write). Stored keys are
// re-rotated for pending shifts by apply_k_shift() (kv_shift.h) before the next compute.
#pragma once

#include <bitset>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/model/batch.h"
#include "engine/model/hparams.h"
#include "ggml/backend.h"
#include "ggml/ggml.h"

namespace engine {

struct KvCell {
    Pos pos = -1;
    Pos shift = 0;  // position change not yet applied to the stored key (RoPE)
    std::bitset<kMaxSeq> seq;
    bool empty() const { return seq.none(); }
};

class KvCache {
  public:
    // Every layer's K and V in memory of `backend`.
    KvCache(const HParams& hp, uint32_t n_cells, ggml::Type type_k, ggml::Type type_v,
            ggml::Backend& backend);
    // Layer il's K and V on layer_backends[il] (one entry per layer; nullptr: `backend`), so that
    // offloaded layers find their cache on their own device.
    KvCache(const HParams& hp, uint32_t n_cells, ggml::Type type_k, ggml::Type type_v, ggml::Backend& backend,
            const std::vector<ggml::Backend*>& layer_backends);
    ~KvCache();

    uint32_t size() const { return (uint32_t)cells_.size(); }
    uint32_t n_used() const { return n_used_; }
    const KvCell& cell(uint32_t i) const { return cells_[i]; }
    ggml::Type type_k() const { return type_k_; }
    ggml::Type type_v() const { return type_v_; }

    // Picks n free cells (lowest indices first). Returns false when the cache has fewer free cells.
    bool find_free(uint32_t n, std::vector<int32_t>& out) const;
    // Picks a free cell for each of n tokens (seqs[i]: token i's sequences) so that a sequence's cells
    // gather in blocks of ggml::kKvBlock cells that hold few others: first a free cell in a block that
    // already holds cells of the token's first sequence, then one in an empty block, then any free cell.
    // Attention then visits few blocks per sequence (fill_blocks). False when fewer than n cells are free.
    bool find_free(uint32_t n, const std::vector<SeqId>* seqs, std::vector<int32_t>& out) const;
    void occupy(int32_t cell, Pos pos, const std::vector<SeqId>& seqs);
    void release(int32_t cell);
    // Cells [0, n_kv) cover every used cell; attention reads only that range.
    uint32_t n_kv() const;
    // mask[t * n_kv + j] = 0 if token t (position pos[t], sequences seqs[t]) may attend cell j, else -inf:
    // the cell belongs to one of the token's sequences and, when causal, is not after the token; with a
    // sliding window of n_swa positions (0: none), it is also fewer than n_swa positions before it.
    // owners: block_seqs(n_kv) when the caller already has it (one micro-batch fills several inputs).
    using SeqSet = std::bitset<kMaxSeq>;
    void fill_mask(const Pos* pos, const std::vector<SeqId>* seqs, uint32_t n_tokens, uint32_t n_kv, float* mask,
                   bool causal = true, uint32_t n_swa = 0, const std::vector<SeqSet>* owners = nullptr) const;
    // A sleeping server: the host buffers' pages go back to the OS (their contents read as zeros afterwards).
    // Only while no cell is used. Returns the bytes given back.
    size_t release_pages();
    // ALiBi: turns the mask fill_mask wrote (plane 0: 0 or -inf) into n_head planes, where a visible cell
    // holds slope_h * -|cell pos - token pos| (llama.cpp's mask value times ggml's per-head slope, the
    // product soft_max would form) and a hidden one -inf.
    void apply_alibi(const Pos* pos, uint32_t n_tokens, uint32_t n_kv, float* mask, uint32_t n_head,
                     float max_bias) const;
    // The blocks of ggml::kKvBlock cells of [0, n_kv) that hold a cell of one of token t's sequences (when
    // causal, one at or before the token's position), in ggml::with_kv_blocks' layout: row t at out + t *
    // row_len, a count then ascending block indices (row_len >= 1 + blocks of n_kv). Every cell fill_mask
    // (with the same causal) leaves visible to t lies in one of them.
    void fill_blocks(const Pos* pos, const std::vector<SeqId>* seqs, uint32_t n_tokens, uint32_t n_kv,
                     int32_t* out, size_t row_len, bool causal = true,
                     const std::vector<SeqSet>* owners = nullptr) const;
    // Per block of ggml::kKvBlock cells of [0, n_kv): the union of its cells' sequences.
    std::vector<SeqSet> block_seqs(uint32_t n_kv) const;
    // Blocks of [0, n_kv) that hold a cell of sequence seq (what its queries' attention visits).
    uint32_t n_blocks_of(SeqId seq, uint32_t n_kv) const;

    // Removes positions [p0, p1) of seq (seq < 0: all sequences; p1 < 0: to the end).
    void seq_rm(SeqId seq, Pos p0, Pos p1);
    // Makes positions [p0, p1) of src also belong to dst (no data is copied).
    void seq_cp(SeqId src, SeqId dst, Pos p0, Pos p1);
    // Removes every sequence but seq.
    void seq_keep(SeqId seq);
    // Moves positions [p0, p1) of seq by delta; cells moved below position 0 leave the sequence.
    // Throws std::runtime_error when a shared cell needs a copy and the cache has no free cell.
    void seq_add(SeqId seq, Pos p0, Pos p1, Pos delta);
    Pos seq_pos_max(SeqId seq) const;  // -1 if the sequence is empty
    Pos seq_pos_min(SeqId seq) const;
    void clear();
    // Cells of seq ordered by position.
    std::vector<int32_t> seq_cells(SeqId seq) const;

    // Pending key rotations: cells whose stored key lags its position, and by how much.
    bool has_shift() const { return has_shift_; }
    void pending_shifts(std::vector<int32_t>& cells, std::vector<int32_t>& deltas) const;
    void clear_shifts();

    // Read and write their rows with ggml::tensor_get/tensor_set: they may live on a device.
    ggml::Tensor* k(int layer) const { return k_[layer]; }
    ggml::Tensor* v(int layer) const { return v_[layer]; }
    int n_layer() const { return (int)k_.size(); }

  private:
    static Pos end_of(Pos p1) { return p1 < 0 ? INT32_MAX : p1; }
    void release_if_empty(KvCell& c);
    // Copies the K and V rows of every layer from cell src to cell dst.
    void copy_cell_data(int32_t src, int32_t dst);

    std::vector<KvCell> cells_;
    uint32_t n_used_ = 0;
    bool has_shift_ = false;
    ggml::Type type_k_, type_v_;
    ggml::Context ctx_{0, true};
    std::vector<ggml::Tensor*> k_, v_;
    std::vector<std::unique_ptr<ggml::Buffer>> buffers_;  // one per backend holding layers
};

}  // namespace engine
