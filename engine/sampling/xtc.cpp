#include "engine/sampling/xtc.h"

#include "engine/sampling/candidates.h"

namespace engine {

XtcSampler::XtcSampler(float probability, float threshold, size_t min_keep, uint32_t seed)
    : probability_(probability), threshold_(threshold), min_keep_(min_keep), seed_(seed), rng_(seed) {}

void XtcSampler::set_seed(uint32_t seed) {
    seed_ = seed;
    rng_.seed(seed);
}

void XtcSampler::apply(TokenDataArray& cur) {
    if (probability_ <= 0.0f || threshold_ > 0.5f || cur.data.size() < 2) return;
    // One draw per step decides whether XTC acts at all.
    std::uniform_real_distribution<float> chance(0.0f, 1.0f);
    if (chance(rng_) > probability_) return;

    softmax(cur, true);
    // last_top: the least likely candidate still at or above the threshold.
    size_t last_top = 0;
    while (last_top + 1 < cur.data.size() && cur.data[last_top + 1].p >= threshold_) ++last_top;
    if (last_top > 0 && cur.data.size() - last_top >= min_keep_) {
        cur.data.erase(cur.data.begin(), cur.data.begin() + static_cast<std::ptrdiff_t>(last_top));
    }
}

}  // namespace engine
