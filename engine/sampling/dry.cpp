#include "engine/sampling/dry.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "engine/sampling/candidates.h"

namespace engine {

namespace {

// llama.cpp's limits: long breakers are truncated, and a breaker's tail is at most this many tokens.
constexpr size_t kMaxBreakerChars = 40;
constexpr size_t kMaxBreakerTailTokens = 20;

using BreakerMap = std::unordered_multimap<Token, std::vector<Token>>;

// Finds tokens for a breaker's remaining text: longest matching piece first. We have only the pieces
// (no tokenizer here), which is enough for the short strings breakers are.
class PieceMatcher {
  public:
    explicit PieceMatcher(const std::vector<std::string>& pieces) : pieces_(pieces) {}

    std::vector<Token> tokenize(std::string_view text) {
        build();
        std::vector<Token> out;
        size_t pos = 0;
        while (pos < text.size() && out.size() < kMaxBreakerTailTokens) {
            size_t len = std::min(text.size() - pos, longest_);
            auto it = index_.end();
            for (; len > 0; --len) {
                it = index_.find(text.substr(pos, len));
                if (it != index_.end()) break;
            }
            if (len == 0) break;  // no piece spells this byte: keep the tokens matched so far
            out.push_back(it->second);
            pos += len;
        }
        return out;
    }

  private:
    void build() {
        if (built_) return;
        built_ = true;
        for (size_t id = 0; id < pieces_.size(); ++id) {
            const std::string& piece = pieces_[id];
            if (piece.empty()) continue;
            index_.emplace(piece, static_cast<Token>(id));
            longest_ = std::max(longest_, piece.size());
        }
    }

    const std::vector<std::string>& pieces_;
    std::unordered_map<std::string_view, Token> index_;
    size_t longest_ = 0;
    bool built_ = false;
};

void add_unique(BreakerMap& map, Token head, std::vector<Token> tail) {
    auto [first, last] = map.equal_range(head);
    for (auto it = first; it != last; ++it) {
        if (it->second == tail) return;
    }
    map.emplace(head, std::move(tail));
}

// A token whose text contains the breaker is a one-token breaker. A token whose text ends with the start
// of the breaker heads a multi-token breaker whose tail spells the rest.
void add_breaker(std::string breaker, const std::vector<std::string>& pieces, PieceMatcher& matcher,
                 BreakerMap& out) {
    if (breaker.empty()) return;
    if (breaker.size() > kMaxBreakerChars) breaker.resize(kMaxBreakerChars);
    for (size_t id = 0; id < pieces.size(); ++id) {
        const std::string& word = pieces[id];
        const auto token = static_cast<Token>(id);
        if (word.find(breaker) != std::string::npos) {
            add_unique(out, token, {});
            continue;
        }
        for (size_t pos = word.find(breaker[0]); pos != std::string::npos;
             pos = word.find(breaker[0], pos + 1)) {
            const size_t overlap = word.size() - pos;  // < breaker.size(), else find() above had matched
            if (word.compare(pos, overlap, breaker, 0, overlap) != 0) continue;
            add_unique(out, token, matcher.tokenize(std::string_view(breaker).substr(overlap)));
        }
    }
}

}  // namespace

DrySampler::DrySampler(float multiplier, float base, int32_t allowed_length, int32_t last_n,
                       const std::vector<std::string>& breakers, const std::vector<std::string>& pieces)
    : multiplier_(multiplier),
      base_(base),
      allowed_length_(std::max(allowed_length, 0)),
      active_(multiplier != 0.0f && base >= 1.0f && last_n > 0),
      history_(active_ ? static_cast<size_t>(last_n) : 0) {
    if (!active_) return;
    PieceMatcher matcher(pieces);
    for (const std::string& breaker : breakers) add_breaker(breaker, pieces, matcher, breakers_);
}

void DrySampler::accept(Token token) {
    if (active_) history_.push(token, nullptr);
}

int DrySampler::repeat_limit(int n) const {
    for (int i = 0; i < n; ++i) {
        auto [first, last] = breakers_.equal_range(recent_[static_cast<size_t>(i)]);
        int longest = -1;
        for (auto it = first; it != last; ++it) {
            const std::vector<Token>& tail = it->second;
            const int len = static_cast<int>(tail.size());
            if (len <= longest || len > i) continue;
            bool match = true;
            for (int j = 0; j < len && match; ++j) match = tail[j] == recent_[static_cast<size_t>(i - 1 - j)];
            if (match) longest = len;
        }
        // The breaker starts i tokens back and its tail covers `longest` newer tokens.
        if (longest >= 0) return i - longest;
    }
    return n;
}

bool DrySampler::is_single_token_breaker(Token token) const {
    auto [first, last] = breakers_.equal_range(token);
    return std::any_of(first, last, [](const auto& entry) { return entry.second.empty(); });
}

void DrySampler::apply(TokenDataArray& cur) {
    if (!active_) return;
    const int n = static_cast<int>(history_.size());
    if (n <= allowed_length_) return;

    // recent_[i] is the token i steps back (0 = newest).
    recent_.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) recent_[static_cast<size_t>(i)] = history_.recent(static_cast<size_t>(i));

    const int limit = repeat_limit(n);
    if (limit < allowed_length_) return;

    // Z-function over the newest-first sequence: match_[k] = how many of the newest tokens reappear, in
    // order, starting k steps back. Linear in the window size.
    match_.assign(static_cast<size_t>(n), 0);
    for (int k = 1, left = 0, right = 0; k < n; ++k) {
        int len = k < right ? std::min(right - k, match_[static_cast<size_t>(k - left)]) : 0;
        while (k + len < n && recent_[static_cast<size_t>(len)] == recent_[static_cast<size_t>(k + len)])
            ++len;
        match_[static_cast<size_t>(k)] = len;
        if (k + len > right) {
            left = k;
            right = k + len;
        }
    }

    // The token that came right after a repeated sequence would extend the repeat if chosen now.
    max_repeat_.clear();
    for (int k = 1; k < n; ++k) {
        const int len = std::min(match_[static_cast<size_t>(k)], limit);
        if (len < allowed_length_) continue;
        int& best = max_repeat_[recent_[static_cast<size_t>(k - 1)]];
        best = std::max(best, len);
    }
    if (max_repeat_.empty()) return;

    // Cap the exponent so base^exponent stays within float range.
    int max_exponent = 0;
    if (base_ > 1.000001f) {
        max_exponent = static_cast<int>(std::log(std::numeric_limits<float>::max()) / std::log(base_));
    }
    for_each_keyed(cur.data, max_repeat_, [&](TokenData& td, int len) {
        if (is_single_token_breaker(td.id)) return;
        int exponent = len - allowed_length_;
        if (max_exponent > 0) exponent = std::min(exponent, max_exponent);
        td.logit -= multiplier_ * static_cast<float>(std::pow(base_, exponent));
    });
    cur.sorted = false;
}

}  // namespace engine
