#include "threadpool.h"

#include <immintrin.h>

namespace ggml::cpu {

namespace {
inline void cpu_relax() { _mm_pause(); }
// Spin this many iterations (~100-200 us) before sleeping on the futex: long enough to bridge the gap
// between two decode steps, short enough that a descheduled peer (a loaded machine, more
// threads than free cores) costs a sleep rather than a whole time slice of spinning.
constexpr int kSpinIterations = 1 << 12;

// Waits until v != old: spin first, then sleep on the futex.
template <typename T>
void spin_then_wait(const std::atomic<T>& v, T old) {
    for (int spin = 0; spin < kSpinIterations; ++spin) {
        if (v.load(std::memory_order_acquire) != old) return;
        cpu_relax();
    }
    while (v.load(std::memory_order_acquire) == old) v.wait(old, std::memory_order_acquire);
}
}  // namespace

ThreadPool::ThreadPool(int n_threads) {
    if (n_threads < 1) n_threads = 1;
    workers_.reserve((size_t)n_threads - 1);
    for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true);
    generation_.fetch_add(1);
    generation_.notify_all();
    for (auto& w : workers_) w.join();
}

void ThreadPool::worker_loop(int ith) {
    uint32_t seen = 0;
    for (;;) {
        spin_then_wait(generation_, seen);
        seen = generation_.load(std::memory_order_acquire);
        if (stop_.load()) return;
        if (ith < job_nth_) {
            (*job_)(ith, job_nth_);
            if (done_.fetch_add(1, std::memory_order_acq_rel) == job_nth_ - 2) done_.notify_one();
        }
    }
}

void ThreadPool::run(int nth, const std::function<void(int, int)>& fn) {
    if (nth > max_threads()) nth = max_threads();
    if (nth < 1) nth = 1;
    if (nth == 1) {
        job_nth_ = 1;
        fn(0, 1);
        return;
    }
    job_ = &fn;
    job_nth_ = nth;
    done_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    generation_.notify_all();
    fn(0, nth);
    for (int d = done_.load(std::memory_order_acquire); d < nth - 1; d = done_.load(std::memory_order_acquire))
        spin_then_wait(done_, d);
}

}  // namespace ggml::cpu
