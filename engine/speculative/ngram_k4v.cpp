// ngram-map-k4v and ngram-mod: a next-token table keyed by the last n tokens, followed token by token.
#include <algorithm>
#include <array>

#include "engine/speculative/ngram_drafters.h"
#include "engine/speculative/ngram_hash.h"
#include "engine/speculative/ngram_table.h"

namespace engine::spec {

namespace {

uint64_t key_of(std::span<const Token> a, std::span<const Token> b, size_t end, int32_t n) {
    // The n tokens ending before `end` of the concatenation a ++ b.
    uint64_t h = kNgramHashBasis;
    for (size_t i = end - (size_t)n; i < end; ++i) h = ngram_hash_step(h, i < a.size() ? a[i] : b[i - a.size()]);
    return h;
}

class NgramMapK4v final : public Drafter {
  public:
    NgramMapK4v(int32_t n_key, int32_t min_hits) : n_(std::max(n_key, 1)), min_hits_(std::max(min_hits, 1)) {}
    DrafterType type() const override { return DrafterType::NgramMapK4v; }
    void begin() override {
        map_.clear();
        n_indexed_ = 0;
    }
    std::vector<Token> draft(std::span<const Token> h, int32_t n_max) override {
        std::vector<Token> out;
        if (h.size() < (size_t)n_ || n_max <= 0) return out;
        for (size_t end = std::max(n_indexed_, (size_t)n_); end < h.size(); ++end) add(key_of(h, {}, end, n_), h[end]);
        n_indexed_ = h.size();
        while ((int32_t)out.size() < n_max) {
            const std::array<Slot, 4>* vals = map_.find(key_of(h, out, h.size() + out.size(), n_));
            if (vals == nullptr) break;
            // The dominant value: at least half of what followed this key.
            const Slot* best = &(*vals)[0];
            int32_t total = 0;
            for (const Slot& s : *vals) {
                total += s.count;
                if (s.count > best->count) best = &s;
            }
            if (best->count < min_hits_ || 2 * best->count < total) break;
            out.push_back(best->token);
        }
        return out;
    }

  private:
    struct Slot {
        Token token = -1;
        int32_t count = 0;
    };
    void add(uint64_t key, Token next) {
        auto& vals = map_[key];
        Slot* weakest = &vals[0];
        for (Slot& s : vals) {
            if (s.count > 0 && s.token == next) {
                ++s.count;
                return;
            }
            if (s.count < weakest->count) weakest = &s;
        }
        // A full set replaces its weakest value (its count restarts).
        *weakest = Slot{next, 1};
    }
    int32_t n_, min_hits_;
    NgramTable<std::array<Slot, 4>> map_;
    size_t n_indexed_ = 0;  // positions whose token was added as a value
};

class NgramMod final : public Drafter {
  public:
    NgramMod(int32_t n_key, uint32_t bits)
        : n_(std::max(n_key, 1)), mask_((1u << std::clamp(bits, 8u, 24u)) - 1), pool_(mask_ + 1, -1) {}
    DrafterType type() const override { return DrafterType::NgramMod; }
    void begin() override { n_indexed_ = 0; }  // the pool stays: it learns from earlier requests
    std::vector<Token> draft(std::span<const Token> h, int32_t n_max) override {
        std::vector<Token> out;
        if (h.size() < (size_t)n_ || n_max <= 0) return out;
        for (size_t end = std::max(n_indexed_, (size_t)n_); end < h.size(); ++end)
            pool_[key_of(h, {}, end, n_) & mask_] = h[end];
        n_indexed_ = h.size();
        while ((int32_t)out.size() < n_max) {
            const Token t = pool_[key_of(h, out, h.size() + out.size(), n_) & mask_];
            if (t < 0) break;
            out.push_back(t);
        }
        return out;
    }

  private:
    int32_t n_;
    uint32_t mask_;
    std::vector<Token> pool_;
    size_t n_indexed_ = 0;
};

}  // namespace

std::unique_ptr<Drafter> make_ngram_map_k4v(int32_t n_key, int32_t min_hits) {
    return std::make_unique<NgramMapK4v>(n_key, min_hits);
}

std::unique_ptr<Drafter> make_ngram_mod(int32_t n_key, uint32_t pool_bits) {
    return std::make_unique<NgramMod>(n_key, pool_bits);
}

}  // namespace engine::spec
