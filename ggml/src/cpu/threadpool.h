// A persistent pool of worker threads that runs one function on n threads at a time (the CPU backend's
// graph loop: cpu_backend.cpp).
#pragma once

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "ggml/backend.h"

namespace ggml::cpu {

class ThreadPool {
public:
    explicit ThreadPool(int n_threads, const CpuThreadOptions& options = {});
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // Pools are capped at kMaxThreads: a run's thread count shares one word with the run's number.
    static constexpr int kNthBits = 12;
    static constexpr int kMaxThreads = (1 << kNthBits) - 1;

    int max_threads() const { return (int)workers_.size() + 1; }
    // Runs fn(ith, nth) on nth threads (the caller is thread 0) and returns when all are done.
    void run(int nth, const std::function<void(int ith, int nth)>& fn);

private:
    void worker_loop(int ith);
    // Pins the calling thread (thread ith of the pool) as options_ say.
    void place(int ith) const;
    template <typename T>
    void spin_then_wait(const std::atomic<T>& v, T old) const;

    CpuThreadOptions options_;
    int spin_iterations_;
    std::atomic<std::thread::id> placed_caller_{};  // the caller thread that thread 0's placement was applied to

    std::vector<std::thread> workers_;
    const std::function<void(int, int)>* job_ = nullptr;  // written before run_word_ publishes a run
    // The run workers wait for: its number (bumped for each run with two or more threads) above kNthBits,
    // its thread count below. One word, so a worker that wakes late reads the count of the run it acts on,
    // never the count of a later run that the caller is writing meanwhile (it would then run a later job
    // under an earlier run's number, twice).
    std::atomic<uint32_t> run_word_{0};
    std::atomic<int> done_{0};
    std::atomic<bool> stop_{false};
};

}  // namespace ggml::cpu
