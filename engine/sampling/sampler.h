// The interface every stage of the sampler chain implements (one class per sampler).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "engine/util/token_data.h"

namespace engine {

class Sampler {
  public:
    virtual ~Sampler() = default;

    virtual std::string_view name() const = 0;
    // Transforms the candidates; a sampler that picks the token also sets cur.selected.
    virtual void apply(TokenDataArray& cur) = 0;
    // Records a token that joined the sequence (prompt tokens too, so penalties see them).
    virtual void accept(Token /*token*/) {}
    // Back to the state right after construction (a new request).
    virtual void reset() {}
    // Samplers that draw random numbers re-seed here and keep the seed for later resets.
    virtual void set_seed(uint32_t /*seed*/) {}
    // A deep copy, random generator state included, that continues exactly like this one.
    virtual std::unique_ptr<Sampler> clone() const = 0;
};

}  // namespace engine
