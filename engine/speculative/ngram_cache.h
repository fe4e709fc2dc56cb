// N-gram statistics for the ngram-cache drafter: for every n-gram of 1..kNgramMax tokens, how often each
// token followed it. Files use llama.cpp's lookup-cache layout (llama-lookup-create writes them), so its
// static caches load here: per n-gram, kNgramMax int32 tokens (-1 past the n-gram's length), an int32
// count of entries, then (int32 token, int32 count) pairs; little-endian, no header.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>

#include "engine/util/token_data.h"

namespace engine::spec {

inline constexpr int kNgramMax = 4;

struct Ngram {
    std::array<Token, kNgramMax> tok{-1, -1, -1, -1};
    bool operator==(const Ngram&) const = default;
    // The n tokens ending just before `end` (end >= n).
    static Ngram ending_at(std::span<const Token> seq, size_t end, int n);
};

struct NgramHash {
    size_t operator()(const Ngram& g) const;
};

using NextCounts = std::unordered_map<Token, int32_t>;

class NgramCache {
  public:
    // Counts every n-gram (n in [n_min, n_max]) of seq[0..end) that has a next token, for positions
    // from `from` on (tokens before `from` were counted by an earlier call).
    void update(std::span<const Token> seq, size_t from, int n_min, int n_max);
    void merge(const NgramCache& other);
    // nullptr when the n-gram was never seen.
    const NextCounts* find(const Ngram& g) const;
    // The most frequent next token, its count and the total count (false when unseen).
    bool best(const Ngram& g, Token& tok, int32_t& count, int32_t& total) const;
    size_t size() const { return map_.size(); }
    void clear() { map_.clear(); }
    // Halves every count, dropping the counts that reach zero and the n-grams left without any, until at
    // most max_ngrams n-grams remain: what was seen often stays (at half the count), what was seen once goes.
    void age(size_t max_ngrams);

    // Throws std::runtime_error with the file name and the reason (unreadable, truncated, bad counts).
    void load(const std::string& path);
    void save(const std::string& path) const;  // written to a temporary name, then renamed

  private:
    std::unordered_map<Ngram, NextCounts, NgramHash> map_;
};

// The levels shared by every slot's ngram-cache drafter.
struct NgramCacheStore {
    // The dynamic level's bound, in n-grams (about 250 bytes each: some 64 MiB), unless its file held more
    // at start. Every finished request adds its n-grams, so without a bound a long-running server would
    // grow with every distinct text it served.
    static constexpr size_t kDynamicNgrams = size_t{1} << 18;

    NgramCache dynamic;          // grows with each finished request, aged past dynamic_limit
    NgramCache static_cache;     // from --lookup-cache-static, never changed
    std::string dynamic_path;    // --lookup-cache-dynamic: loaded at start, saved by save_dynamic()
    size_t dynamic_limit = kDynamicNgrams;

    // Sets dynamic_path and loads the file when it exists; the bound becomes the larger of the default and
    // the file's n-grams. Throws as NgramCache::load.
    void load_dynamic(const std::string& path);
    // A finished request's n-grams join the dynamic level; past its bound the level ages to three quarters
    // of it (so that aging, a pass over every n-gram, comes once per quarter of the bound's growth).
    void add_request(const NgramCache& request);
    void save_dynamic() const;
};

}  // namespace engine::spec
