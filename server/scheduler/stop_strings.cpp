#include "server/scheduler/stop_strings.h"

#include <algorithm>

namespace sched {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
    for (auto& s : stops)
        if (!s.empty()) stops_.push_back(std::move(s));
}

StopMatcher::Result StopMatcher::push(const std::string& text) {
    pending_ += text;
    Result r;
    // Earliest complete stop string wins.
    size_t best = std::string::npos;
    for (const auto& s : stops_) {
        const size_t at = pending_.find(s);
        if (at != std::string::npos && at < best) {
            best = at;
            r.word = s;
        }
    }
    if (best != std::string::npos) {
        r.emit = pending_.substr(0, best);
        r.stopped = true;
        pending_.clear();
        return r;
    }
    // Hold back the longest suffix that is a prefix of some stop string.
    size_t hold = 0;
    for (const auto& s : stops_) {
        const size_t max_len = std::min(s.size() - 1, pending_.size());
        for (size_t len = max_len; len > hold; --len)
            if (pending_.compare(pending_.size() - len, len, s, 0, len) == 0) {
                hold = len;
                break;
            }
    }
    r.emit = pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return r;
}

std::string StopMatcher::flush() {
    std::string out;
    out.swap(pending_);
    return out;
}

}  // namespace sched
