// Candidate-array primitives shared by the samplers: ordering, softmax and random picks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/util/token_data.h"

namespace engine {

// Highest logit first; ties in unspecified order. A function object so sorts inline the comparison.
struct LogitGreater {
    bool operator()(const TokenData& a, const TokenData& b) const { return a.logit > b.logit; }
};
inline constexpr LogitGreater logit_greater{};

// One candidate per token (id == index), unsorted, nothing selected.
void fill_candidates(TokenDataArray& cur, const float* logits, int32_t n_vocab);

// Calls fn(candidate, value) for every candidate whose id is a key of by_token (a map from token to
// value). Fresh candidates sit at index == id and are reached directly; otherwise one hashed scan.
template <class Map, class Fn>
void for_each_keyed(std::vector<TokenData>& data, const Map& by_token, Fn&& fn) {
    bool direct = true;
    for (const auto& entry : by_token) {
        const auto idx = static_cast<size_t>(entry.first);
        if (entry.first < 0 || idx >= data.size() || data[idx].id != entry.first) {
            direct = false;
            break;
        }
    }
    if (direct) {
        for (const auto& entry : by_token) fn(data[static_cast<size_t>(entry.first)], entry.second);
        return;
    }
    for (TokenData& td : data) {
        auto it = by_token.find(td.id);
        if (it != by_token.end()) fn(td, it->second);
    }
}

// max over get(0..n), with independent accumulators so the loop is not one long dependency chain.
template <class Get>
float max_over(size_t n, Get get) {
    float m0 = -INFINITY, m1 = -INFINITY, m2 = -INFINITY, m3 = -INFINITY;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        m0 = std::max(m0, get(i));
        m1 = std::max(m1, get(i + 1));
        m2 = std::max(m2, get(i + 2));
        m3 = std::max(m3, get(i + 3));
    }
    for (; i < n; ++i) m0 = std::max(m0, get(i));
    return std::max(std::max(m0, m1), std::max(m2, m3));
}

// Largest logit (-inf when empty or when every candidate is banned).
float max_logit(const TokenDataArray& cur);

// p = softmax(logit) over the candidates; sorts by logit first when `sort` is set and the array is not
// sorted yet. Banned (-inf) candidates get p = 0; if all are banned every p is 0.
void softmax(TokenDataArray& cur, bool sort);

// Collects the candidates of the highest logit buckets, walking down from the best bucket until the
// collected ones number at least min_count and hold at least min_mass probability (p must be valid when
// min_mass > 0); everything when the bounds cannot be met. One pass to histogram, one to copy. Returns how
// many leading elements of out come from buckets above the last one taken: those are certainly within
// the best min_count / min_mass. The rest (the last bucket) follow. Neither part is sorted.
size_t gather_top(const std::vector<TokenData>& in, size_t min_count, float min_mass,
                  std::vector<TokenData>& out);

// Copies the k highest-logit candidates of `in` (k clamped to in.size()), sorted descending, into out.
// Costs about one pass over `in` plus a sort of roughly k elements, never a full sort of a big vocabulary.
void copy_top(const std::vector<TokenData>& in, size_t k, std::vector<TokenData>& out);

// Keeps only the k highest-logit candidates, sorted descending (cur.sorted becomes true).
void keep_top(TokenDataArray& cur, size_t k);

// Throws std::runtime_error when no candidate has a finite logit (nothing can be sampled).
void require_candidate(const TokenDataArray& cur);

// llama.cpp's `dist` draw: softmax in double, one uniform double from rng, first candidate whose running
// probability mass reaches it. Leaves normalized p in the candidates and returns the picked index.
size_t pick_dist(TokenDataArray& cur, std::mt19937& rng);

// A draw over the candidates' current p exactly as std::discrete_distribution makes it (mirostat and
// adaptive-p draw this way), without its per-call tables. Throws when every p is 0.
size_t pick_discrete(const TokenDataArray& cur, std::mt19937& rng);

// Index of the first candidate with the highest logit.
size_t pick_argmax(const TokenDataArray& cur);

}  // namespace engine
