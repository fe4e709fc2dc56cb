// A constraint on which token may come next (grammars implement it; the sampler chain consumes it).
#pragma once

#include <memory>

#include "engine/util/token_data.h"

namespace engine {

class TokenConstraint {
public:
    virtual ~TokenConstraint() = default;
    // Sets logit = -INFINITY on every candidate the constraint forbids now (end-of-generation tokens
    // are allowed only where the constraint may end).
    virtual void apply(TokenDataArray& cur) = 0;
    // Whether this single token is allowed now (rejection sampling checks the pick first).
    virtual bool allows(Token token) = 0;
    // Advances the state past token; the token must be allowed.
    virtual void accept(Token token) = 0;
    // Back to the initial state (a new request).
    virtual void reset() = 0;
    virtual std::unique_ptr<TokenConstraint> clone() const = 0;
};

}  // namespace engine
