#include "engine/sampling/pickers.h"

#include "engine/sampling/candidates.h"

namespace engine {

void DistSampler::set_seed(uint32_t seed) {
    seed_ = seed;
    rng_.seed(seed);
}

void DistSampler::apply(TokenDataArray& cur) {
    cur.selected = static_cast<int64_t>(pick_dist(cur, rng_));
}

void GreedySampler::apply(TokenDataArray& cur) {
    cur.selected = static_cast<int64_t>(pick_argmax(cur));
}

}  // namespace engine
