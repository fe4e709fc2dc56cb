#include "engine/sampling/logit_bias.h"

namespace engine {

void LogitBiasSampler::apply(TokenDataArray& cur) {
    if (biases_.empty()) return;
    // Fresh candidates sit at index == id: bias those directly and search only for the rest.
    unplaced_.clear();
    for (const LogitBias& lb : biases_) {
        const auto idx = static_cast<size_t>(lb.token);
        if (lb.token >= 0 && idx < cur.data.size() && cur.data[idx].id == lb.token) {
            cur.data[idx].logit += lb.bias;
        } else {
            unplaced_.push_back(lb);
        }
    }
    if (!unplaced_.empty()) {
        for (TokenData& td : cur.data) {
            for (const LogitBias& lb : unplaced_) {
                if (td.id == lb.token) td.logit += lb.bias;
            }
        }
    }
    cur.sorted = false;
}

}  // namespace engine
