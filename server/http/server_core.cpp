#include "server/http/server_core.h"

namespace server::http::detail {

void ServerCore::add(Connection* c, std::weak_ptr<Connection> weak) {
    std::lock_guard lock(mu_);
    connections_.emplace(c, std::move(weak));
}

void ServerCore::remove(Connection* c) {
    {
        std::lock_guard lock(mu_);
        connections_.erase(c);
    }
    cv_.notify_all();
}

std::size_t ServerCore::count() const {
    std::lock_guard lock(mu_);
    return connections_.size();
}

bool ServerCore::wait_until_at_most(std::size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return connections_.size() <= n; });
}

std::vector<std::shared_ptr<Connection>> ServerCore::snapshot() const {
    std::lock_guard lock(mu_);
    std::vector<std::shared_ptr<Connection>> out;
    for (const auto& [ptr, weak] : connections_) {
        if (auto c = weak.lock()) out.push_back(std::move(c));
    }
    return out;
}

}  // namespace server::http::detail
