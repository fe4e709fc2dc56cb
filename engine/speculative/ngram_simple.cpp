// ngram-simple and ngram-map-k: propose the continuation that followed the latest earlier occurrence of
// the last n_key tokens. The simple one scans backwards; map-k keeps a hash index built as tokens arrive.
#include <algorithm>

#include "engine/speculative/ngram_drafters.h"
#include "engine/speculative/ngram_hash.h"
#include "engine/speculative/ngram_table.h"

namespace engine::spec {

namespace {

bool same(std::span<const Token> seq, size_t a, size_t b, int32_t n) {
    return std::equal(seq.begin() + (long)a, seq.begin() + (long)a + n, seq.begin() + (long)b);
}

std::vector<Token> copy_from(std::span<const Token> seq, size_t start, int32_t n_max) {
    const size_t end = std::min(seq.size(), start + (size_t)std::max(n_max, 0));
    return std::vector<Token>(seq.begin() + (long)start, seq.begin() + (long)end);
}

class NgramSimple final : public Drafter {
  public:
    NgramSimple(int32_t n_key, int32_t min_hits) : n_(std::max(n_key, 1)), min_hits_(std::max(min_hits, 1)) {}
    DrafterType type() const override { return DrafterType::NgramSimple; }
    void begin() override {}
    std::vector<Token> draft(std::span<const Token> h, int32_t n_max) override {
        if (h.size() <= (size_t)n_ || n_max <= 0) return {};
        const size_t key = h.size() - (size_t)n_;
        size_t latest = 0;
        int32_t hits = 0;
        for (size_t i = key; i-- > 0 && hits < min_hits_;)
            if (same(h, i, key, n_) && hits++ == 0) latest = i;
        return hits >= min_hits_ ? copy_from(h, latest + (size_t)n_, n_max) : std::vector<Token>{};
    }

  private:
    int32_t n_, min_hits_;
};

uint64_t hash_tokens(std::span<const Token> seq, size_t at, int32_t n) {
    uint64_t h = kNgramHashBasis;
    for (int32_t i = 0; i < n; ++i) h = ngram_hash_step(h, seq[at + (size_t)i]);
    return h;
}

class NgramMapK final : public Drafter {
  public:
    NgramMapK(int32_t n_key, int32_t min_hits) : n_(std::max(n_key, 1)), min_hits_(std::max(min_hits, 1)) {}
    DrafterType type() const override { return DrafterType::NgramMapK; }
    void begin() override {
        map_.clear();
        n_indexed_ = 0;
    }
    std::vector<Token> draft(std::span<const Token> h, int32_t n_max) override {
        if (h.size() <= (size_t)n_ || n_max <= 0) return {};
        // Index every n-gram that has a next token: those starting before size - n.
        const size_t last = h.size() - (size_t)n_;
        for (; n_indexed_ < last; ++n_indexed_) {
            Entry& e = map_[hash_tokens(h, n_indexed_, n_)];
            e.latest = (uint32_t)n_indexed_;
            ++e.hits;
        }
        const Entry* e = map_.find(hash_tokens(h, last, n_));
        if (e == nullptr || e->hits < min_hits_ || !same(h, e->latest, last, n_)) return {};
        return copy_from(h, e->latest + (size_t)n_, n_max);
    }

  private:
    struct Entry {
        uint32_t latest = 0;  // start of the n-gram's latest occurrence
        int32_t hits = 0;     // its occurrences so far
    };
    int32_t n_, min_hits_;
    NgramTable<Entry> map_;  // n-gram hash -> its occurrences
    size_t n_indexed_ = 0;
};

}  // namespace

std::unique_ptr<Drafter> make_ngram_simple(int32_t n_key, int32_t min_hits) {
    return std::make_unique<NgramSimple>(n_key, min_hits);
}

std::unique_ptr<Drafter> make_ngram_map_k(int32_t n_key, int32_t min_hits) {
    return std::make_unique<NgramMapK>(n_key, min_hits);
}

}  // namespace engine::spec
