// Work that blocks (an upstream HTTP exchange, a loopback request) run on threads of its own, off the I/O
// threads, counted so that the owner can wait for them before it goes away. Exceptions are logged with
// `what` as the prefix, never thrown.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

namespace server::http {

class DetachedTasks {
  public:
    explicit DetachedTasks(std::string what) : what_(std::move(what)) {}
    ~DetachedTasks() { wait_idle(std::chrono::seconds(10)); }
    DetachedTasks(const DetachedTasks&) = delete;
    DetachedTasks& operator=(const DetachedTasks&) = delete;

    void run(std::function<void()> fn);
    // Waits (at most `timeout`) until none is running; returns whether none is.
    bool wait_idle(std::chrono::milliseconds timeout);

  private:
    const std::string what_;
    std::mutex mu_;
    std::condition_variable cv_;
    int running_ = 0;
};

}  // namespace server::http
