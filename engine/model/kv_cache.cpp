#include "engine/model/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

namespace engine {

KvCache::KvCache(const HParams& hp, uint32_t n_cells, ggml::Type type_k, ggml::Type type_v, ggml::Backend& backend)
    : cells_(n_cells), type_k_(type_k), type_v_(type_v) {
    if (n_cells == 0) throw std::runtime_error("KV cache: context size must be positive");
    if (hp.n_embd_k_gqa() % ggml::block_size(type_k) != 0 || hp.n_embd_v_gqa() % ggml::block_size(type_v) != 0)
        throw std::runtime_error("KV cache: the head size is not a multiple of the cache type's block size");
    size_t total = 0;
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        k_.push_back(ctx_.new_tensor_2d(type_k, hp.n_embd_k_gqa(), n_cells));
        v_.push_back(ctx_.new_tensor_2d(type_v, hp.n_embd_v_gqa(), n_cells));
        total += (k_.back()->nbytes() + 255) / 256 * 256 + (v_.back()->nbytes() + 255) / 256 * 256;
    }
    buffer_ = backend.alloc_buffer(total);
    std::vector<char> zeros;
    size_t off = 0;
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        for (ggml::Tensor* t : {k_[il], v_[il]}) {
            t->data = (char*)buffer_->base + off;
            t->buffer = buffer_.get();
            zeros.assign(t->nbytes(), 0);
            backend.tensor_set(t, zeros.data(), 0, zeros.size());
            off += (t->nbytes() + 255) / 256 * 256;
        }
    }
}

KvCache::~KvCache() = default;

bool KvCache::find_free(uint32_t n, std::vector<int32_t>& out) const {
    out.clear();
    if (n > size() - n_used_) return false;
    for (uint32_t i = 0; i < size() && out.size() < n; ++i)
        if (cells_[i].empty()) out.push_back((int32_t)i);
    return out.size() == n;
}

void KvCache::occupy(int32_t cell, Pos pos, const std::vector<SeqId>& seqs) {
    KvCell& c = cells_[(size_t)cell];
    if (c.empty()) ++n_used_;
    c.pos = pos;
    c.seq.reset();
    for (SeqId s : seqs) c.seq.set((size_t)s);
}

void KvCache::release(int32_t cell) {
    KvCell& c = cells_[(size_t)cell];
    c.seq.reset();
    release_if_empty(c);
}

uint32_t KvCache::n_kv() const {
    uint32_t last = 0;
    for (uint32_t i = size(); i > 0; --i)
        if (!cells_[i - 1].empty()) {
            last = i;
            break;
        }
    // Padding keeps shapes (and so planning) stable across steps; padded cells are masked.
    const uint32_t padded = (last + 31) / 32 * 32;
    return std::min(std::max(padded, 32u), size());
}

void KvCache::fill_mask(const Pos* pos, const std::vector<SeqId>* seqs, uint32_t n_tokens, uint32_t n_kv,
                        float* mask) const {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for (uint32_t t = 0; t < n_tokens; ++t) {
        std::bitset<kMaxSeq> mine;
        for (SeqId s : seqs[t]) mine.set((size_t)s);
        float* row = mask + (size_t)t * n_kv;
        for (uint32_t j = 0; j < n_kv; ++j) {
            const KvCell& c = cells_[j];
            row[j] = (!c.empty() && (c.seq & mine).any() && c.pos <= pos[t]) ? 0.0f : neg_inf;
        }
    }
}

void KvCache::release_if_empty(KvCell& c) {
    if (c.empty() && c.pos >= 0) {
        c.pos = -1;
        --n_used_;
    }
}

void KvCache::seq_rm(SeqId seq, Pos p0, Pos p1) {
    const Pos end = end_of(p1);
    for (auto& c : cells_) {
        if (c.empty() || c.pos < p0 || c.pos >= end) continue;
        if (seq < 0)
            c.seq.reset();
        else
            c.seq.reset((size_t)seq);
        release_if_empty(c);
    }
}

void KvCache::seq_cp(SeqId src, SeqId dst, Pos p0, Pos p1) {
    if (src == dst) return;
    const Pos end = end_of(p1);
    for (auto& c : cells_)
        if (!c.empty() && c.seq.test((size_t)src) && c.pos >= p0 && c.pos < end) c.seq.set((size_t)dst);
}

void KvCache::seq_keep(SeqId seq) {
    for (auto& c : cells_) {
        if (c.empty()) continue;
        const bool had = c.seq.test((size_t)seq);
        c.seq.reset();
        if (had) c.seq.set((size_t)seq);
        release_if_empty(c);
    }
}

Pos KvCache::seq_pos_max(SeqId seq) const {
    Pos m = -1;
    for (const auto& c : cells_)
        if (!c.empty() && c.seq.test((size_t)seq)) m = std::max(m, c.pos);
    return m;
}

Pos KvCache::seq_pos_min(SeqId seq) const {
    Pos m = -1;
    for (const auto& c : cells_)
        if (!c.empty() && c.seq.test((size_t)seq)) m = m < 0 ? c.pos : std::min(m, c.pos);
    return m;
}

void KvCache::clear() {
    for (auto& c : cells_) {
        c.seq.reset();
        c.pos = -1;
    }
    n_used_ = 0;
}

}  // namespace engine
