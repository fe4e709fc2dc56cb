#include "server/api/reasoning_control.h"

#include <algorithm>

namespace api {

std::shared_ptr<std::atomic<bool>> ReasoningControls::arm(const std::string& id) {
    auto signal = std::make_shared<std::atomic<bool>>(false);
    std::lock_guard lk(mu_);
    // Finished requests leave expired entries; dropping them whenever the map has doubled keeps it
    // within twice the requests running, at a constant cost per request.
    if (armed_.size() >= prune_at_) {
        std::erase_if(armed_, [](const auto& kv) { return kv.second.expired(); });
        prune_at_ = std::max<std::size_t>(64, 2 * armed_.size());
    }
    armed_[id] = signal;
    return signal;
}

bool ReasoningControls::end(const std::string& id) {
    std::lock_guard lk(mu_);
    auto it = armed_.find(id);
    if (it == armed_.end()) return false;
    auto signal = it->second.lock();
    if (!signal) {
        armed_.erase(it);
        return false;
    }
    signal->store(true, std::memory_order_relaxed);
    return true;
}

std::size_t ReasoningControls::size() const {
    std::lock_guard lk(mu_);
    return armed_.size();
}

}  // namespace api
