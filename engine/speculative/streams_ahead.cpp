#include "engine/speculative/streams_ahead.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace engine::spec {

std::vector<bool> streams_ahead(std::span<const StreamProgress> streams) {
    constexpr double kNoBound = std::numeric_limits<double>::infinity();
    const auto steps = [](const StreamProgress& s) {
        return s.remaining < 0 ? kNoBound : s.remaining / std::max(s.pace, 1.0);
    };
    // The two longest answer every stream's "how long does the longest other stream take".
    double first = -1, second = -1;
    size_t first_at = streams.size();
    for (size_t i = 0; i < streams.size(); ++i) {
        const double t = steps(streams[i]);
        if (t > first) {
            second = first;
            first = t;
            first_at = i;
        } else if (t > second) {
            second = t;
        }
    }
    std::vector<bool> ahead(streams.size(), false);
    for (size_t i = 0; i < streams.size(); ++i) {
        const double t = steps(streams[i]);
        const double longest_other = i == first_at ? second : first;
        if (t == kNoBound || longest_other < 0) continue;  // no bound of its own, or alone
        ahead[i] = longest_other == kNoBound || t + std::sqrt(longest_other) < longest_other;
    }
    return ahead;
}

}  // namespace engine::spec
