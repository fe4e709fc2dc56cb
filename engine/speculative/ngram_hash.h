// The hash every n-gram table of the drafters uses (FNV-1a over the token ids): one definition, so that
// the tables agree and a change reaches all of them.
#pragma once

#include <cstdint>

#include "engine/util/token_data.h"

namespace engine::spec {

inline constexpr uint64_t kNgramHashBasis = 1469598103934665603ull;

inline uint64_t ngram_hash_step(uint64_t h, Token t) {
    return (h ^ (uint32_t)t) * 1099511628211ull;
}

}  // namespace engine::spec
