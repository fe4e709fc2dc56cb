#include "engine/sampling/rng.h"

#include <chrono>
#include <random>

namespace engine {

uint32_t resolve_seed(uint32_t seed) {
    if (seed != kRandomSeed) return seed;
    std::random_device device;
    // Mix in the clock in case random_device is a deterministic fallback on this platform.
    const auto now = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    return device() ^ static_cast<uint32_t>(now) ^ static_cast<uint32_t>(now >> 32);
}

}  // namespace engine
