#include "engine/speculative/draft_model_cost.h"

#include <algorithm>

namespace engine::spec {

namespace {
constexpr double kWeight = 0.1;  // of the newest call in the running averages
}

void DraftModelCost::observe(int32_t n_slots, int32_t catch_up_tokens, double catch_up_seconds, int32_t positions,
                             double draft_seconds) {
    if (positions <= 0 || n_slots <= 0) return;
    if (skip_next_) {
        skip_next_ = false;
        return;
    }
    const double per = draft_seconds / positions;
    position_ = position_ > 0 ? (1 - kWeight) * position_ + kWeight * per : per;
    if (catch_up_tokens <= kSteadyCatchUp * n_slots) call_ = (1 - kWeight) * call_ + kWeight * catch_up_seconds;
    catch_up_.observe(catch_up_tokens, catch_up_seconds);
}

double DraftModelCost::per_token_seconds() const {
    return position_ > 0 ? std::min(catch_up_.per_token(), position_) : 0.0;
}

namespace {
// The part of a catch-up beyond drafting's steady one (priced per call): a new prompt's, paid once.
double once(size_t behind) {
    return behind > (size_t)DraftModelCost::kSteadyCatchUp
               ? (double)(behind - (size_t)DraftModelCost::kSteadyCatchUp)
               : 0.0;
}
}  // namespace

double DraftModelCost::fixed_seconds(size_t behind, int32_t left) const {
    return call_ + once(behind) * per_token_seconds() / std::max(left, 1);
}

double DraftModelCost::probe_seconds(size_t behind) const {
    return call_ + once(behind) * (per_token_seconds() > 0 ? per_token_seconds() : position_);
}

}  // namespace engine::spec
