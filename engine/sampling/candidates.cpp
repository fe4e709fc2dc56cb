#include "engine/sampling/candidates.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace engine {

namespace {

// Below this many wanted elements a heap-based partial sort is cheapest.
constexpr size_t kSmallTop = 128;
constexpr int kBuckets = 128;

// Buckets span at most this many logits below the best; everything lower shares the lowest bucket (its
// probability is below e^-64 anyway), so one far outlier does not squash the useful range.
constexpr float kBucketSpan = 64.0f;

}  // namespace

size_t gather_top(const std::vector<TokenData>& in, size_t min_count, float min_mass,
                  std::vector<TokenData>& out) {
    float lo = std::numeric_limits<float>::infinity();
    float hi = -std::numeric_limits<float>::infinity();
    for (const TokenData& td : in) {
        if (td.logit == -std::numeric_limits<float>::infinity()) continue;
        lo = std::min(lo, td.logit);
        hi = std::max(hi, td.logit);
    }
    if (!(hi > lo)) {  // all equal or all banned: nothing to split on
        out = in;
        return 0;
    }
    lo = std::max(lo, hi - kBucketSpan);
    const float scale = kBuckets / (hi - lo);
    auto bucket_of = [&](float logit) {
        if (!(logit >= lo)) return 0;  // below the span, -inf and NaN sink to the lowest bucket
        return std::min(kBuckets - 1, static_cast<int>((logit - lo) * scale));
    };
    std::array<size_t, kBuckets> count{};
    std::array<double, kBuckets> mass{};
    for (const TokenData& td : in) {
        const int b = bucket_of(td.logit);
        ++count[b];
        mass[b] += td.p;
    }
    int cut = kBuckets - 1;
    size_t have = count[cut];
    double have_mass = mass[cut];
    while ((have < min_count || have_mass < min_mass) && cut > 0) {
        --cut;
        have += count[cut];
        have_mass += mass[cut];
    }
    const size_t sure = have - count[cut];
    out.resize(have);
    size_t above = 0;
    size_t last = sure;
    for (const TokenData& td : in) {
        const int b = bucket_of(td.logit);
        if (b > cut) {
            out[above++] = td;
        } else if (b == cut) {
            out[last++] = td;
        }
    }
    return sure;
}

namespace {

// Large k: gather the buckets that hold the top k and sort only those.
void copy_top_bucketed(const std::vector<TokenData>& in, size_t k, std::vector<TokenData>& out) {
    gather_top(in, k, 0.0f, out);
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(k), out.end(), logit_greater);
    out.resize(k);
}

}  // namespace

void fill_candidates(TokenDataArray& cur, const float* logits, int32_t n_vocab) {
    cur.data.resize(static_cast<size_t>(n_vocab));
    for (int32_t i = 0; i < n_vocab; ++i) cur.data[static_cast<size_t>(i)] = TokenData{i, logits[i], 0.0f};
    cur.sorted = false;
    cur.selected = -1;
}

float max_logit(const TokenDataArray& cur) {
    if (cur.data.empty()) return -std::numeric_limits<float>::infinity();
    if (cur.sorted) return cur.data.front().logit;
    return max_over(cur.data.size(), [&](size_t i) { return cur.data[i].logit; });
}

void softmax(TokenDataArray& cur, bool sort) {
    if (cur.data.empty()) return;
    if (sort && !cur.sorted) {
        std::sort(cur.data.begin(), cur.data.end(), logit_greater);
        cur.sorted = true;
    }
    const float max = max_logit(cur);
    if (max == -std::numeric_limits<float>::infinity()) {
        for (TokenData& td : cur.data) td.p = 0.0f;
        return;
    }
    float sum = 0.0f;
    for (TokenData& td : cur.data) {
        td.p = std::exp(td.logit - max);
        sum += td.p;
    }
    for (TokenData& td : cur.data) td.p /= sum;
}

void copy_top(const std::vector<TokenData>& in, size_t k, std::vector<TokenData>& out) {
    k = std::min(k, in.size());
    if (k == in.size()) {
        out = in;
        std::sort(out.begin(), out.end(), logit_greater);
    } else if (k <= kSmallTop) {
        out.resize(k);
        std::partial_sort_copy(in.begin(), in.end(), out.begin(), out.end(), logit_greater);
    } else {
        copy_top_bucketed(in, k, out);
    }
}

void keep_top(TokenDataArray& cur, size_t k) {
    k = std::min(k, cur.data.size());
    if (!cur.sorted) {
        if (k == cur.data.size()) {
            std::sort(cur.data.begin(), cur.data.end(), logit_greater);
        } else if (k <= kSmallTop) {
            std::partial_sort(cur.data.begin(), cur.data.begin() + static_cast<std::ptrdiff_t>(k),
                              cur.data.end(), logit_greater);
        } else {
            std::vector<TokenData> top;
            copy_top_bucketed(cur.data, k, top);
            std::copy(top.begin(), top.end(), cur.data.begin());
        }
    }
    cur.data.resize(k);
    cur.sorted = true;
}

void require_candidate(const TokenDataArray& cur) {
    if (max_logit(cur) == -std::numeric_limits<float>::infinity()) {
        throw std::runtime_error("sampling: no candidate token left (every logit is -inf)");
    }
}

size_t pick_dist(TokenDataArray& cur, std::mt19937& rng) {
    require_candidate(cur);
    // One number per token, also when a single candidate is left: llama-server (b11669) draws it, so
    // a seed gives its tokens only if the generator advances the same way.
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const double u = uniform(rng);
    if (cur.data.size() == 1) {
        cur.data[0].p = 1.0f;
        return 0;
    }
    const float max = max_logit(cur);
    double sum = 0.0;
    for (TokenData& td : cur.data) {
        td.p = std::exp(td.logit - max);
        sum += td.p;
    }
    const double target = sum * u;
    // Single pass: find the pick while normalizing. p > 0 keeps a zero draw off banned candidates.
    size_t picked = cur.data.size();
    double running = 0.0;
    for (size_t i = 0; i < cur.data.size(); ++i) {
        TokenData& td = cur.data[i];
        if (picked == cur.data.size()) {
            running += td.p;
            if (td.p > 0.0f && running >= target) picked = i;
        }
        td.p = static_cast<float>(td.p / sum);
    }
    if (picked == cur.data.size()) {  // rounding left the target just above the total: take the last live one
        for (size_t i = cur.data.size(); i-- > 0;) {
            if (cur.data[i].p > 0.0f) {
                picked = i;
                break;
            }
        }
    }
    return picked;
}

size_t pick_discrete(const TokenDataArray& cur, std::mt19937& rng) {
    double total = 0.0;
    for (const TokenData& td : cur.data) total += td.p;
    if (!(total > 0.0))
        throw std::runtime_error("sampling: no candidate token left (all probabilities are 0)");
    // The same arithmetic and generator use as std::discrete_distribution (so a seed picks the same token
    // as llama.cpp), without building its tables: one outcome draws nothing; otherwise one canonical double
    // against the running sum of p / total, the last bound being 1.
    const size_t n = cur.data.size();
    if (n < 2) return 0;
    const double u = std::generate_canonical<double, std::numeric_limits<double>::digits>(rng);
    double cum = 0.0;
    for (size_t i = 0; i + 1 < n; ++i) {
        const double p = cur.data[i].p / total;
        cum += p;
        if (cum >= u && p > 0.0) return i;
    }
    // The last bound is 1; make sure rounding never lands on a zero-probability candidate.
    size_t last = n - 1;
    while (last > 0 && !(cur.data[last].p > 0.0f)) --last;
    return last;
}

size_t pick_argmax(const TokenDataArray& cur) {
    require_candidate(cur);
    size_t best = 0;
    for (size_t i = 1; i < cur.data.size(); ++i) {
        if (cur.data[i].logit > cur.data[best].logit) best = i;
    }
    return best;
}

}  // namespace engine
