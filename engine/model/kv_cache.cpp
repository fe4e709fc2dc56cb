#include "engine/model/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace engine {

KvCache::KvCache(const HParams& hp, uint32_t n_cells, ggml::Type type_k, ggml::Type type_v,
                 ggml::Backend& backend)
    : KvCache(hp, n_cells, type_k, type_v, backend, std::vector<ggml::Backend*>(hp.n_layer, nullptr)) {}

KvCache::KvCache(const HParams& hp, uint32_t n_cells, ggml::Type type_k, ggml::Type type_v,
                 ggml::Backend& backend, const std::vector<ggml::Backend*>& layer_backends)
    : cells_(n_cells), type_k_(type_k), type_v_(type_v) {
    if (n_cells == 0) throw std::runtime_error("KV cache: context size must be positive");
    if (layer_backends.size() != hp.n_layer)
        throw std::invalid_argument("KV cache: one backend per layer expected");
    // Attention reads one head at a time, so each head must hold whole blocks of the cache type.
    if (hp.n_embd_head_k % ggml::block_size(type_k) != 0)
        throw std::runtime_error("KV cache: the K head size " + std::to_string(hp.n_embd_head_k) +
                                 " is not a multiple of the block size " +
                                 std::to_string(ggml::block_size(type_k)) + " of cache type " +
                                 ggml::type_name(type_k));
    if (hp.n_embd_head_v % ggml::block_size(type_v) != 0)
        throw std::runtime_error("KV cache: the V head size " + std::to_string(hp.n_embd_head_v) +
                                 " is not a multiple of the block size " +
                                 std::to_string(ggml::block_size(type_v)) + " of cache type " +
                                 ggml::type_name(type_v));
    std::vector<ggml::Backend*> where;  // per layer
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        k_.push_back(ctx_.new_tensor_2d(type_k, hp.n_embd_k_gqa(), n_cells));
        v_.push_back(ctx_.new_tensor_2d(type_v, hp.n_embd_v_gqa(), n_cells));
        where.push_back(layer_backends[il] ? layer_backends[il] : &backend);
    }
    // One buffer per backend, layers in order (K then V), each tensor cleared.
    std::vector<ggml::Backend*> seen;
    for (ggml::Backend* b : where) {
        if (std::find(seen.begin(), seen.end(), b) != seen.end()) continue;
        seen.push_back(b);
        std::vector<ggml::Tensor*> ts;
        for (uint32_t il = 0; il < hp.n_layer; ++il)
            if (where[il] == b) ts.insert(ts.end(), {k_[il], v_[il]});
        try {
            buffers_.push_back(ggml::alloc_tensors(*b, ts));
        } catch (const std::exception& e) {
            // The context size (the model's training context unless -c says otherwise) sets the size.
            uint64_t bytes = 0;
            for (ggml::Tensor* t : ts) bytes += t->nbytes();
            throw std::runtime_error("KV cache: cannot allocate " + std::to_string(bytes >> 20) +
                                     " MiB for a context of " + std::to_string(n_cells) + " tokens (" + e.what() +
                                     "); a smaller context size (-c) needs less");
        }
        const std::vector<char> zeros(16 << 20, 0);  // cleared 16 MiB at a time, not a copy of each tensor
        for (ggml::Tensor* t : ts)
            for (size_t off = 0; off < t->nbytes(); off += zeros.size())
                ggml::tensor_set(t, zeros.data(), off, std::min(zeros.size(), t->nbytes() - off));
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

bool KvCache::find_free(uint32_t n, const std::vector<SeqId>* seqs, std::vector<int32_t>& out) const {
    out.clear();
    if (n > size() - n_used_) return false;
    const uint32_t B = (uint32_t)ggml::kKvBlock, nb = (size() + B - 1) / B;
    std::vector<SeqSet> owners = block_seqs(size());
    std::vector<uint32_t> free_in(nb, 0);  // free cells per block, this call's picks taken out
    for (uint32_t i = 0; i < size(); ++i) free_in[i / B] += cells_[i].empty();
    std::vector<uint8_t> taken(size(), 0);
    auto take_in = [&](uint32_t b) {
        for (uint32_t i = b * B; i < std::min(size(), (b + 1) * B); ++i)
            if (cells_[i].empty() && !taken[i]) {
                taken[i] = 1;
                --free_in[b];
                return (int32_t)i;
            }
        return (int32_t)-1;  // unreachable: callers check free_in
    };
    for (uint32_t t = 0; t < n; ++t) {
        const SeqId s = seqs[t].empty() ? 0 : seqs[t].front();
        int32_t cell = -1;
        // A block holding the sequence (its last such block first: where it is growing), then an empty one.
        for (uint32_t b = nb; b-- > 0 && cell < 0;)
            if (free_in[b] > 0 && owners[b].test((size_t)s)) cell = take_in(b);
        for (uint32_t b = 0; b < nb && cell < 0; ++b)
            if (free_in[b] > 0 && owners[b].none()) cell = take_in(b);
        for (uint32_t b = 0; b < nb && cell < 0; ++b)
            if (free_in[b] > 0) cell = take_in(b);
        for (SeqId q : seqs[t]) owners[cell / B].set((size_t)q);
        out.push_back(cell);
    }
    return true;
}

std::vector<KvCache::SeqSet> KvCache::block_seqs(uint32_t n_kv) const {
    const uint32_t B = (uint32_t)ggml::kKvBlock;
    std::vector<SeqSet> owners((n_kv + B - 1) / B);
    for (uint32_t i = 0; i < n_kv; ++i) owners[i / B] |= cells_[i].seq;
    return owners;
}

void KvCache::fill_blocks(const Pos* pos, const std::vector<SeqId>* seqs, uint32_t n_tokens, uint32_t n_kv,
                          int32_t* out, size_t row_len, bool causal, const std::vector<SeqSet>* given) const {
    const std::vector<SeqSet> computed = given ? std::vector<SeqSet>() : block_seqs(n_kv);
    const std::vector<SeqSet>& owners = given ? *given : computed;
    if (row_len < 1 + owners.size()) throw std::logic_error("KV cache: block rows too short");
    const uint32_t B = (uint32_t)ggml::kKvBlock;
    for (uint32_t t = 0; t < n_tokens; ++t) {
        SeqSet mine;
        for (SeqId s : seqs[t]) mine.set((size_t)s);
        int32_t* row = out + (size_t)t * row_len;
        int32_t c = 0;
        for (size_t b = 0; b < owners.size(); ++b) {
            if (!(owners[b] & mine).any()) continue;
            // Causal: a block whose cells of these sequences all come after the token shows it nothing (a
            // prompt's later blocks, for its earlier tokens), so attention skips it.
            bool shown = !causal;
            for (uint32_t j = (uint32_t)b * B, j1 = std::min(n_kv, j + B); !shown && j < j1; ++j) {
                const KvCell& cell = cells_[j];
                shown = !cell.empty() && (cell.seq & mine).any() && cell.pos <= pos[t];
            }
            if (shown) row[1 + c++] = (int32_t)b;
        }
        row[0] = c;
    }
}

uint32_t KvCache::n_blocks_of(SeqId seq, uint32_t n_kv) const {
    uint32_t n = 0;
    for (const SeqSet& o : block_seqs(n_kv)) n += o.test((size_t)seq);
    return n;
}

void KvCache::occupy(int32_t cell, Pos pos, const std::vector<SeqId>& seqs) {
    KvCell& c = cells_[(size_t)cell];
    if (c.empty()) ++n_used_;
    c.pos = pos;
    c.shift = 0;
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
                        float* mask, bool causal, uint32_t n_swa, const std::vector<SeqSet>* given) const {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    const uint32_t B = (uint32_t)ggml::kKvBlock;
    const std::vector<SeqSet> computed = given ? std::vector<SeqSet>() : block_seqs(n_kv);
    const std::vector<SeqSet>& owners = given ? *given : computed;
    for (uint32_t t = 0; t < n_tokens; ++t) {
        SeqSet mine;
        for (SeqId s : seqs[t]) mine.set((size_t)s);
        float* row = mask + (size_t)t * n_kv;
        for (uint32_t b = 0; b < owners.size(); ++b) {
            const uint32_t j0 = b * B, j1 = std::min(n_kv, j0 + B);
            if (!(owners[b] & mine).any()) {  // no cell of the token's sequences here
                std::fill(row + j0, row + j1, neg_inf);
                continue;
            }
            for (uint32_t j = j0; j < j1; ++j) {
                const KvCell& c = cells_[j];
                const bool visible = !c.empty() && (c.seq & mine).any() && (!causal || c.pos <= pos[t]) &&
                                     (n_swa == 0 || (int64_t)pos[t] - c.pos < (int64_t)n_swa);
                row[j] = visible ? 0.0f : neg_inf;
            }
        }
    }
}

size_t KvCache::release_pages() {
    if (n_used_ != 0) throw std::logic_error("KvCache::release_pages: cells are in use");
    size_t n = 0;
    for (auto& b : buffers_) n += ggml::release_pages(*b);
    return n;
}

void KvCache::apply_alibi(const Pos* pos, uint32_t n_tokens, uint32_t n_kv, float* mask, uint32_t n_head,
                          float max_bias) const {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    const uint32_t n_head_log2 = 1u << (uint32_t)std::floor(std::log2((float)n_head));
    const float m0 = std::pow(2.0f, -max_bias / (float)n_head_log2);
    const float m1 = std::pow(2.0f, -(max_bias / 2.0f) / (float)n_head_log2);
    const size_t plane = (size_t)n_tokens * n_kv;
    // From the last head down, so that plane 0 (what fill_mask wrote) is read before it is overwritten.
    for (uint32_t h = n_head; h-- > 0;) {
        const float slope = h < n_head_log2 ? std::pow(m0, (float)(h + 1))
                                            : std::pow(m1, (float)(2 * (h - n_head_log2) + 1));
        for (uint32_t t = 0; t < n_tokens; ++t) {
            const float* base = mask + (size_t)t * n_kv;
            float* row = mask + h * plane + (size_t)t * n_kv;
            for (uint32_t j = 0; j < n_kv; ++j)
                row[j] = base[j] == neg_inf ? neg_inf
                                            : slope * (float)-std::abs((int64_t)cells_[j].pos - (int64_t)pos[t]);
        }
    }
}

void KvCache::release_if_empty(KvCell& c) {
    if (c.empty() && c.pos >= 0) {
        c.pos = -1;
        c.shift = 0;
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

void KvCache::seq_add(SeqId seq, Pos p0, Pos p1, Pos delta) {
    if (delta == 0) return;
    const Pos end = end_of(p1);
    std::vector<int32_t> moving;  // collected first: copies made below may land inside the range
    uint32_t n_copies = 0;
    for (uint32_t i = 0; i < size(); ++i) {
        const KvCell& c = cells_[i];
        if (c.empty() || !c.seq.test((size_t)seq) || c.pos < p0 || c.pos >= end) continue;
        moving.push_back((int32_t)i);
        if (c.seq.count() > 1 && c.pos + delta >= 0) ++n_copies;
    }
    // Checked before anything changes, so that a failure leaves the cache as it was.
    if (n_copies > size() - n_used_)
        throw std::runtime_error("KV cache: no free cell to copy a shared cell before shifting it (" +
                                 std::to_string(n_copies) + " needed)");
    for (int32_t i : moving) {
        KvCell* c = &cells_[(size_t)i];
        if (c->pos + delta < 0) {  // shifted out of the sequence
            c->seq.reset((size_t)seq);
            release_if_empty(*c);
            continue;
        }
        if (c->seq.count() > 1) {
            // Other sequences keep this cell where it is; seq moves on a private copy.
            std::vector<int32_t> fresh;
            find_free(1, fresh);  // available: counted above
            copy_cell_data(i, fresh[0]);
            KvCell& copy = cells_[(size_t)fresh[0]];
            copy.pos = c->pos;
            copy.shift = c->shift;
            copy.seq.reset();
            copy.seq.set((size_t)seq);
            ++n_used_;
            c->seq.reset((size_t)seq);
            c = &copy;
        }
        c->pos += delta;
        c->shift += delta;
        has_shift_ = true;
    }
}

void KvCache::copy_cell_data(int32_t src, int32_t dst) {
    std::vector<char> row;
    for (size_t il = 0; il < k_.size(); ++il)
        for (ggml::Tensor* t : {k_[il], v_[il]}) {
            row.resize(t->nb[1]);
            ggml::tensor_get(t, row.data(), (size_t)src * t->nb[1], row.size());
            ggml::tensor_set(t, row.data(), (size_t)dst * t->nb[1], row.size());
        }
}

std::vector<int32_t> KvCache::seq_cells(SeqId seq) const {
    std::vector<int32_t> out;
    for (uint32_t i = 0; i < size(); ++i)
        if (!cells_[i].empty() && cells_[i].seq.test((size_t)seq)) out.push_back((int32_t)i);
    std::stable_sort(out.begin(), out.end(),
                     [this](int32_t a, int32_t b) { return cells_[(size_t)a].pos < cells_[(size_t)b].pos; });
    return out;
}

void KvCache::pending_shifts(std::vector<int32_t>& cells, std::vector<int32_t>& deltas) const {
    cells.clear();
    deltas.clear();
    for (uint32_t i = 0; i < size(); ++i)
        if (!cells_[i].empty() && cells_[i].shift != 0) {
            cells.push_back((int32_t)i);
            deltas.push_back(cells_[i].shift);
        }
}

void KvCache::clear_shifts() {
    for (auto& c : cells_) c.shift = 0;
    has_shift_ = false;
}

void KvCache::clear() {
    for (auto& c : cells_) {
        c.seq.reset();
        c.pos = -1;
        c.shift = 0;
    }
    n_used_ = 0;
    has_shift_ = false;
}

}  // namespace engine
