// Candidate tokens handed through the sampler chain.
#pragma once

#include <cstdint>
#include <vector>

namespace engine {

using Token = int32_t;

struct TokenData {
    Token id;
    float logit;
    float p;  // probability, valid after a softmax step
};

struct TokenDataArray {
    std::vector<TokenData> data;
    bool sorted = false;    // data sorted by logit, descending
    int64_t selected = -1;  // index into data of the picked token, set by the final sampler
};

}  // namespace engine
