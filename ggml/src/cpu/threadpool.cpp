#include "threadpool.h"

#include <algorithm>

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

namespace ggml::cpu {

namespace {
inline void cpu_relax() { _mm_pause(); }
// At the default poll level (50), spin this many iterations (~100-200 us) before sleeping on the futex:
// long enough to bridge the gap between two decode steps, short enough that a descheduled peer (a loaded
// machine, more threads than free cores) costs a sleep rather than a whole time slice of spinning.
constexpr int kSpinIterationsAt50 = 1 << 12;
}  // namespace

// Waits until v != old: spin first (as long as the poll level says), then sleep on the futex.
template <typename T>
void ThreadPool::spin_then_wait(const std::atomic<T>& v, T old) const {
    for (int spin = 0; spin < spin_iterations_; ++spin) {
        if (v.load(std::memory_order_acquire) != old) return;
        cpu_relax();
    }
    while (v.load(std::memory_order_acquire) == old) v.wait(old, std::memory_order_acquire);
}

void ThreadPool::place(int ith) const {
    if (options_.cpus.empty()) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (options_.strict) {
        CPU_SET(options_.cpus[(size_t)ith % options_.cpus.size()], &set);
    } else {
        for (int c : options_.cpus) CPU_SET(c, &set);
    }
    // Failure (a CPU outside the cgroup's set) leaves the thread where it was; the options were checked
    // against the process's allowed CPUs before the pool was made.
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

ThreadPool::ThreadPool(int n_threads, const CpuThreadOptions& options)
    : options_(options),
      spin_iterations_((int)((int64_t)kSpinIterationsAt50 * std::clamp(options.poll, 0, 100) / 50)) {
    n_threads = std::clamp(n_threads, 1, kMaxThreads);
    workers_.reserve((size_t)n_threads - 1);
    for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true);
    run_word_.store(run_word_.load() + (1u << kNthBits));
    run_word_.notify_all();
    for (auto& w : workers_) w.join();
}

void ThreadPool::worker_loop(int ith) {
    place(ith);
    uint32_t seen = 0;
    for (;;) {
        spin_then_wait(run_word_, seen);
        seen = run_word_.load(std::memory_order_acquire);
        if (stop_.load()) return;
        // A worker beyond this run's count takes no part, and the caller does not wait for it: it may
        // still be here when the caller publishes the next run, which is why the count comes from `seen`.
        const int nth = (int)(seen & ((1u << kNthBits) - 1));
        if (ith < nth) {
            (*job_)(ith, nth);
            if (done_.fetch_add(1, std::memory_order_acq_rel) == nth - 2) done_.notify_one();
        }
    }
}

void ThreadPool::run(int nth, const std::function<void(int, int)>& fn) {
    // The caller is thread 0: placed once per calling thread.
    if (!options_.cpus.empty() && placed_caller_.load(std::memory_order_relaxed) != std::this_thread::get_id()) {
        place(0);
        placed_caller_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    }
    if (nth > max_threads()) nth = max_threads();
    if (nth < 1) nth = 1;
    if (nth == 1) {  // the workers are not woken, nor is anything they read written
        fn(0, 1);
        return;
    }
    job_ = &fn;
    done_.store(0, std::memory_order_relaxed);
    const uint32_t number = (run_word_.load(std::memory_order_relaxed) >> kNthBits) + 1;
    run_word_.store((number << kNthBits) | (uint32_t)nth, std::memory_order_release);
    run_word_.notify_all();
    fn(0, nth);
    for (int d = done_.load(std::memory_order_acquire); d < nth - 1; d = done_.load(std::memory_order_acquire))
        spin_then_wait(done_, d);
}

}  // namespace ggml::cpu
