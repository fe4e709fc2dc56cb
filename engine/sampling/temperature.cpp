#include "engine/sampling/temperature.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/sampling/candidates.h"

namespace engine {

void apply_temperature(TokenDataArray& cur, float temp) {
    if (cur.data.empty()) return;
    if (temp <= 0.0f) {
        size_t best = 0;
        for (size_t i = 1; i < cur.data.size(); ++i) {
            if (cur.data[i].logit > cur.data[best].logit) best = i;
        }
        for (size_t i = 0; i < cur.data.size(); ++i) {
            if (i != best) cur.data[i].logit = -std::numeric_limits<float>::infinity();
        }
        return;
    }
    for (TokenData& td : cur.data) td.logit /= temp;
}

float TemperatureSampler::dynamic_temperature(TokenDataArray& cur) const {
    const float lo = std::max(0.0f, temp_ - range_);
    const float hi = temp_ + range_;
    softmax(cur, true);
    float entropy = 0.0f;
    for (const TokenData& td : cur.data) {
        if (td.p > 0.0f) entropy -= td.p * std::log(td.p);
    }
    const float max_entropy = std::log(static_cast<float>(cur.data.size()));
    return lo + (hi - lo) * std::pow(entropy / max_entropy, exponent_);
}

void TemperatureSampler::apply(TokenDataArray& cur) {
    if (range_ <= 0.0f) {
        apply_temperature(cur, temp_);
        return;
    }
    if (cur.data.size() <= 1) return;
    apply_temperature(cur, dynamic_temperature(cur));
    // The array is sorted here (dynamic_temperature sorted it), so recompute p against the first logit.
    double sum = 0.0;
    const double max = cur.data[0].logit;
    for (TokenData& td : cur.data) {
        td.p = static_cast<float>(std::exp(td.logit - max));
        sum += td.p;
    }
    for (TokenData& td : cur.data) td.p = static_cast<float>(td.p / sum);
}

}  // namespace engine
