#include "engine/sampling/truncation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/sampling/candidates.h"

namespace engine {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Up to this size an unsorted array is simply sorted in place, and a nucleus up to it is returned sorted.
constexpr size_t kTopPSortInPlace = 1024;

}  // namespace

void TopKSampler::apply(TokenDataArray& cur) {
    if (k_ <= 0 || cur.data.empty()) return;
    keep_top(cur, static_cast<size_t>(k_));
}

size_t TopPSampler::cutoff(const std::vector<TokenData>& top, bool complete) const {
    float mass = 0.0f;
    for (size_t i = 0; i < top.size(); ++i) {
        mass += top[i].p;
        if (mass >= p_ && i + 1 >= min_keep_) return i + 1;
    }
    return complete ? top.size() : 0;
}

void TopPSampler::apply(TokenDataArray& cur) {
    if (p_ >= 1.0f || cur.data.empty()) return;
    softmax(cur, false);
    if (cur.sorted) {
        cur.data.resize(cutoff(cur.data, true));
        return;
    }
    if (cur.data.size() <= kTopPSortInPlace) {
        std::sort(cur.data.begin(), cur.data.end(), logit_greater);
        cur.sorted = true;
        cur.data.resize(cutoff(cur.data, true));
        return;
    }
    // Large and unsorted: candidates in the buckets above the cut are in for sure, so only the cut bucket
    // needs sorting to find where the mass reaches p.
    const size_t sure = gather_top(cur.data, min_keep_, p_, top_);
    std::sort(top_.begin() + static_cast<std::ptrdiff_t>(sure), top_.end(), logit_greater);
    float mass = 0.0f;
    for (size_t i = 0; i < sure; ++i) mass += top_[i].p;
    size_t keep = top_.size() == cur.data.size() ? top_.size() : 0;
    for (size_t i = sure; i < top_.size(); ++i) {
        mass += top_[i].p;
        if (mass >= p_ && i + 1 >= min_keep_) {
            keep = i + 1;
            break;
        }
    }
    if (keep == 0) {  // float rounding left the sum just short of the bucket total: decide on everything
        copy_top(cur.data, cur.data.size(), top_);
        keep = cutoff(top_, true);
    }
    top_.resize(keep);
    // A nucleus of usual size is returned sorted (llama.cpp's order); a huge one is not worth sorting.
    cur.sorted = keep <= kTopPSortInPlace;
    if (cur.sorted) std::sort(top_.begin(), top_.end(), logit_greater);
    cur.data.assign(top_.begin(), top_.end());
}

void MinPSampler::apply(TokenDataArray& cur) {
    if (p_ <= 0.0f || cur.data.empty()) return;
    // p_i >= p * p_max  <=>  logit_i >= max_logit + log(p): no softmax needed.
    const float min_logit = max_logit(cur) + std::log(p_);
    if (!cur.sorted) {
        const auto kept = static_cast<size_t>(std::count_if(
            cur.data.begin(), cur.data.end(), [&](const TokenData& td) { return td.logit >= min_logit; }));
        if (kept > 0 && kept >= min_keep_) {
            std::erase_if(cur.data, [&](const TokenData& td) { return !(td.logit >= min_logit); });
            return;
        }
        // Too few pass: sort so that the min_keep best survive.
        std::sort(cur.data.begin(), cur.data.end(), logit_greater);
        cur.sorted = true;
    }
    size_t keep = 1;  // the best candidate always passes
    while (keep < cur.data.size() && (cur.data[keep].logit >= min_logit || keep < min_keep_)) ++keep;
    cur.data.resize(keep);
}

void TypicalSampler::apply(TokenDataArray& cur) {
    if (p_ >= 1.0f || cur.data.empty()) return;
    softmax(cur, true);
    float entropy = 0.0f;
    for (const TokenData& td : cur.data) {
        if (td.p > 0.0f) entropy -= td.p * std::log(td.p);
    }
    // Rank by |surprise - entropy|; banned candidates (p = 0) rank last.
    std::vector<float> distance(cur.data.size());
    for (size_t i = 0; i < cur.data.size(); ++i) {
        const float p = cur.data[i].p;
        distance[i] = p > 0.0f ? std::fabs(-std::log(p) - entropy) : std::numeric_limits<float>::infinity();
    }
    std::vector<size_t> order(cur.data.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return distance[a] < distance[b]; });

    size_t keep = order.size();
    float mass = 0.0f;
    for (size_t i = 0; i < order.size(); ++i) {
        mass += cur.data[order[i]].p;
        if (mass > p_ && i + 1 >= min_keep_) {
            keep = i + 1;
            break;
        }
    }
    std::vector<TokenData> kept(keep);
    for (size_t i = 0; i < keep; ++i) kept[i] = cur.data[order[i]];
    cur.data = std::move(kept);
    cur.sorted = false;
}

void TopNSigmaSampler::apply(TokenDataArray& cur) {
    if (n_ <= 0.0f || cur.data.size() <= 1) return;
    // Mean and standard deviation over the live (finite) logits.
    float max = kNegInf;
    double sum = 0.0;
    size_t live = 0;
    for (const TokenData& td : cur.data) {
        if (td.logit == kNegInf) continue;
        max = std::max(max, td.logit);
        sum += td.logit;
        ++live;
    }
    if (live == 0) return;
    const double mean = sum / static_cast<double>(live);
    double var = 0.0;
    for (const TokenData& td : cur.data) {
        if (td.logit != kNegInf) var += (td.logit - mean) * (td.logit - mean);
    }
    const auto sigma = static_cast<float>(std::sqrt(var / static_cast<double>(live)));
    const float floor = max - n_ * sigma;
    // Dropping the masked candidates (rather than keeping them at -inf) keeps later steps small. The
    // survivors keep their order (llama-server b11669 draws from them unsorted: a seed picks its token).
    std::erase_if(cur.data, [&](const TokenData& td) { return td.logit < floor; });
    softmax(cur, false);
}

}  // namespace engine
