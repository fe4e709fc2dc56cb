// A persistent pool of worker threads with a spin barrier, used to run a graph: every thread walks the
// nodes, computes its share of each op, and meets the others at a barrier before the next op.
#pragma once

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace ggml::cpu {

class ThreadPool {
public:
    explicit ThreadPool(int n_threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int max_threads() const { return (int)workers_.size() + 1; }
    // Runs fn(ith, nth) on nth threads (the caller is thread 0) and returns when all are done.
    void run(int nth, const std::function<void(int ith, int nth)>& fn);
    // Blocks until all nth threads of the current run() have arrived.
    void barrier();

private:
    void worker_loop(int ith);

    std::vector<std::thread> workers_;
    const std::function<void(int, int)>* job_ = nullptr;
    int job_nth_ = 0;
    std::atomic<uint32_t> generation_{0};  // bumped for each run()
    std::atomic<int> done_{0};
    std::atomic<bool> stop_{false};
    // barrier state (sense-reversing)
    std::atomic<int> barrier_count_{0};
    std::atomic<uint32_t> barrier_phase_{0};
};

}  // namespace ggml::cpu
