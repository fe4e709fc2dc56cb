#include "engine/sampling/penalties.h"

#include <algorithm>

#include "engine/sampling/candidates.h"

namespace engine {

PenaltiesSampler::PenaltiesSampler(int32_t last_n, float repeat, float frequency, float presence)
    : last_n_(std::max(last_n, 0)),
      repeat_(repeat),
      frequency_(frequency),
      presence_(presence),
      window_(static_cast<size_t>(last_n_)) {}

void PenaltiesSampler::accept(Token token) {
    if (last_n_ == 0) return;
    Token dropped = 0;
    if (window_.push(token, &dropped)) {
        auto it = counts_.find(dropped);
        if (--it->second == 0) counts_.erase(it);
    }
    ++counts_[token];
}

int PenaltiesSampler::count(Token token) const {
    auto it = counts_.find(token);
    return it == counts_.end() ? 0 : it->second;
}

void PenaltiesSampler::penalize(TokenData& td, int n) const {
    // Dividing a negative logit would raise it, so negative logits are multiplied instead.
    if (td.logit <= 0.0f) {
        td.logit *= repeat_;
    } else {
        td.logit /= repeat_;
    }
    td.logit -= static_cast<float>(n) * frequency_ + (n > 0 ? presence_ : 0.0f);
}

void PenaltiesSampler::apply(TokenDataArray& cur) {
    if (last_n_ == 0 || counts_.empty()) return;
    if (repeat_ == 1.0f && frequency_ == 0.0f && presence_ == 0.0f) return;
    // The window holds at most last_n distinct tokens: visit those instead of testing every candidate.
    for_each_keyed(cur.data, counts_, [this](TokenData& td, int n) { penalize(td, n); });
    cur.sorted = false;
}

void PenaltiesSampler::reset() {
    window_.clear();
    counts_.clear();
}

}  // namespace engine
