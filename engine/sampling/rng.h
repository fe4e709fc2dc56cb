// Seeds for the per-chain random generators.
#pragma once

#include <cstdint>

namespace engine {

// llama.cpp's LLAMA_DEFAULT_SEED: "pick a random seed".
inline constexpr uint32_t kRandomSeed = 0xFFFFFFFFu;

// The seed itself, or a fresh random one for kRandomSeed.
uint32_t resolve_seed(uint32_t seed);

}  // namespace engine
