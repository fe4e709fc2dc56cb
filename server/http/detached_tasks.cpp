#include "server/http/detached_tasks.h"

#include <spdlog/spdlog.h>

#include <thread>

namespace server::http {

void DetachedTasks::run(std::function<void()> fn) {
    {
        std::lock_guard lk(mu_);
        ++running_;
    }
    std::thread([this, fn = std::move(fn)] {
        try {
            fn();
        } catch (const std::exception& e) {
            spdlog::error("{}: {}", what_, e.what());
        }
        std::lock_guard lk(mu_);
        --running_;
        cv_.notify_all();
    }).detach();
}

bool DetachedTasks::wait_idle(std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, timeout, [this] { return running_ == 0; });
}

}  // namespace server::http
