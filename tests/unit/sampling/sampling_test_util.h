// Helpers shared by the sampling tests: candidate arrays from plain logits and double-precision reference
// math that does not go through the code under test.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "engine/util/token_data.h"

namespace sampling_test {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Candidates with id == index, unsorted.
inline engine::TokenDataArray candidates(const std::vector<float>& logits) {
    engine::TokenDataArray cur;
    for (size_t i = 0; i < logits.size(); ++i) {
        cur.data.push_back({static_cast<engine::Token>(i), logits[i], 0.0f});
    }
    return cur;
}

// Logits whose softmax is exactly the given distribution.
inline std::vector<float> logits_of(const std::vector<double>& probs) {
    std::vector<float> out;
    for (double p : probs) out.push_back(static_cast<float>(std::log(p)));
    return out;
}

inline std::vector<engine::Token> ids(const engine::TokenDataArray& cur) {
    std::vector<engine::Token> out;
    for (const auto& td : cur.data) out.push_back(td.id);
    return out;
}

inline std::vector<double> softmax(const std::vector<double>& logits) {
    double max = -std::numeric_limits<double>::infinity();
    for (double l : logits) max = std::max(max, l);
    std::vector<double> out;
    double sum = 0.0;
    for (double l : logits) {
        out.push_back(std::exp(l - max));
        sum += out.back();
    }
    for (double& p : out) p /= sum;
    return out;
}

}  // namespace sampling_test
