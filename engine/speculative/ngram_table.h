// A flat hash table from an n-gram's hash (ngram_hash.h) to a drafter's value, for the drafters that
// index a request's tokens (ngram-map-k, ngram-map-k4v). Open addressing in one array: adding an n-gram
// allocates nothing once the table has grown to a request's size, and clear() keeps that size for the
// slot's next request. Entries are never removed within a request.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace engine::spec {

template <class V>
class NgramTable {
  public:
    // The value of `key`, value-initialised when new.
    V& operator[](uint64_t key) {
        if (2 * (used_ + 1) > keys_.size()) grow();
        const size_t i = probe(key = nonzero(key));
        if (keys_[i] == 0) {
            keys_[i] = key;
            vals_[i] = V{};
            ++used_;
        }
        return vals_[i];
    }
    // The value of `key`, or nullptr.
    const V* find(uint64_t key) const {
        if (used_ == 0) return nullptr;
        const size_t i = probe(nonzero(key));
        return keys_[i] == 0 ? nullptr : &vals_[i];
    }
    void clear() {
        if (used_ == 0) return;
        std::fill(keys_.begin(), keys_.end(), 0);
        used_ = 0;
    }
    size_t size() const { return used_; }

  private:
    // 0 marks an empty entry; a hash of 0 shares the key 1 (a collision only costs a rejected draft, as
    // any other hash collision does, and the drafters that need certainty compare the tokens).
    static uint64_t nonzero(uint64_t key) { return key == 0 ? 1 : key; }
    size_t probe(uint64_t key) const {
        const size_t mask = keys_.size() - 1;
        size_t i = (size_t)(key ^ (key >> 29)) & mask;
        while (keys_[i] != 0 && keys_[i] != key) i = (i + 1) & mask;
        return i;
    }
    void grow() {
        const size_t n = keys_.empty() ? 256 : 2 * keys_.size();
        const std::vector<uint64_t> old_keys = std::exchange(keys_, std::vector<uint64_t>(n, 0));
        const std::vector<V> old_vals = std::exchange(vals_, std::vector<V>(n));
        for (size_t j = 0; j < old_keys.size(); ++j)
            if (old_keys[j] != 0) {
                const size_t i = probe(old_keys[j]);
                keys_[i] = old_keys[j];
                vals_[i] = old_vals[j];
            }
    }
    std::vector<uint64_t> keys_;  // a power of two in size, at most half full
    std::vector<V> vals_;
    size_t used_ = 0;
};

}  // namespace engine::spec
