// The CPU backend's thread pool: every share of a run runs exactly once, with the run's own thread count,
// and before run() returns, also when the runs before it used fewer threads than the pool has (tiny ops,
// `-t` below `-tb`), so that workers outside a run may still be waking up for it when the next one starts.
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "ggml/src/cpu/threadpool.h"

namespace {

struct RunCheck {
    static constexpr int kPool = 6;
    std::array<std::atomic<int>, kPool> executions{};
    std::atomic<int> returned{-1};  // the last run whose run() returned
    std::atomic<int> wrong_count{0}, late{0};

    // One run numbered r on nth threads; returns a description of what went wrong, empty when nothing did.
    std::string run(ggml::cpu::ThreadPool& pool, int r, int nth) {
        for (auto& e : executions) e.store(0);
        const std::function<void(int, int)> fn = [&, r, nth](int ith, int n) {
            if (n != nth) wrong_count.fetch_add(1);
            if (returned.load() >= r) late.fetch_add(1);
            executions[(size_t)ith].fetch_add(1);
        };
        pool.run(nth, fn);
        returned.store(r);
        for (int i = 0; i < kPool; ++i) {
            const int want = i < nth ? 1 : 0;
            if (executions[(size_t)i].load() != want)
                return "run " + std::to_string(r) + " on " + std::to_string(nth) + " threads: share " +
                       std::to_string(i) + " ran " + std::to_string(executions[(size_t)i].load()) + " times";
        }
        if (wrong_count.load() || late.load())
            return "run " + std::to_string(r) + ": " + std::to_string(wrong_count.load()) +
                   " shares saw another run's count, " + std::to_string(late.load()) +
                   " ran after run() returned";
        return {};
    }
};

}  // namespace

TEST_CASE("thread pool: runs of changing thread counts each run every share once, before run() returns",
          "[ggml][threadpool]") {
    // More threads than this machine's cores make workers lose the CPU at any instruction; poll 0 makes
    // the idle ones sleep at once, so each run wakes them through the futex.
    for (int poll : {0, 50}) {
        ggml::cpu::ThreadPool pool(RunCheck::kPool, ggml::CpuThreadOptions{{}, false, poll});
        RunCheck check;
        // Thread counts that leave workers out (2, 3), then take them all (6), then one thread alone.
        const int pattern[] = {2, 6, 3, 1, 6, 2, 2, 5, 1, 4};
        std::string failure;
        for (int r = 0; r < 3000 && failure.empty(); ++r) failure = check.run(pool, r, pattern[r % 10]);
        INFO("poll " << poll);
        CHECK(failure == "");
    }
}

TEST_CASE("thread pool: a run asking for more threads than the pool has runs on the pool's",
          "[ggml][threadpool]") {
    ggml::cpu::ThreadPool pool(1);
    CHECK(pool.max_threads() == 1);
    std::atomic<int> ran{0};
    pool.run(8, [&](int ith, int nth) {
        CHECK(ith == 0);
        CHECK(nth == 1);
        ran.fetch_add(1);
    });
    CHECK(ran.load() == 1);
}
