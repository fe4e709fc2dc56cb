// Memory read bandwidth with T threads: the bound decode runs against (issue 20: "tg128 at least 0.95x the
// measured bandwidth limit"). Each thread sums its own share of a buffer much larger than the caches, over
// and over for about --seconds; the rate is all bytes read over the wall time from a common start to the last
// thread's end. The buffer is written first, so every page is real memory, not the shared zero page.
// Prints the CPU, then "threads T: X GB/s" (GB = 1e9 bytes) for each T asked for. One core's demand loads
// may not keep enough lines in flight to reach what the memory gives (Intel server cores especially): with
// --prefetch B each 64-byte line also asks for the line B bytes ahead (--hint t0, t1, t2 or nta, default
// t0), so the limit of a loop that prefetches, as the decode kernels do, can be measured too.
// Usage: bench_bandwidth [--mib N (default 1024)] [--seconds S (default 1)] [--prefetch B] [--hint H] T [T
// ...]
#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

// Eight independent sums, so the loads are not serialized behind one add chain; the result is kept so the
// compiler cannot drop the reads.
template <int kHint>
uint64_t sum_words(const uint64_t* p, size_t n, size_t ahead_words) {
    uint64_t s[8] = {};
    for (size_t i = 0; i + 8 <= n; i += 8) {
        if constexpr (kHint >= 0) {
            if (i + ahead_words < n)
                _mm_prefetch(reinterpret_cast<const char*>(p + i + ahead_words),
                             static_cast<enum _mm_hint>(kHint));
        }
        for (int k = 0; k < 8; ++k) s[k] += p[i + k];
    }
    uint64_t t = 0;
    for (uint64_t v : s) t += v;
    return t;
}

// The compile-time hint of each --hint name; -1: no prefetch.
int g_hint = -1;
size_t g_ahead_words = 0;

uint64_t sum_share(const uint64_t* p, size_t n) {
    switch (g_hint) {
        case 0:
            return sum_words<_MM_HINT_T0>(p, n, g_ahead_words);
        case 1:
            return sum_words<_MM_HINT_T1>(p, n, g_ahead_words);
        case 2:
            return sum_words<_MM_HINT_T2>(p, n, g_ahead_words);
        case 3:
            return sum_words<_MM_HINT_NTA>(p, n, g_ahead_words);
        default:
            return sum_words<-1>(p, n, 0);
    }
}

double measure(const std::vector<uint64_t>& buf, int threads, double seconds) {
    const size_t share = buf.size() / size_t(threads) / 8 * 8;
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<uint64_t> bytes(size_t(threads), 0), sink(size_t(threads), 0);
    std::vector<std::thread> pool;
    using clock = std::chrono::steady_clock;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            const uint64_t* p = buf.data() + size_t(t) * share;
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire)) {
            }
            const auto end = clock::now() + std::chrono::duration<double>(seconds);
            do {
                sink[size_t(t)] += sum_share(p, share);
                bytes[size_t(t)] += share * sizeof(uint64_t);
            } while (clock::now() < end);
        });
    }
    while (ready.load() < threads) {
    }
    const auto start = clock::now();
    go.store(true, std::memory_order_release);
    for (auto& th : pool) th.join();
    const double wall = std::chrono::duration<double>(clock::now() - start).count();
    uint64_t total = 0, keep = 0;
    for (int t = 0; t < threads; ++t) total += bytes[size_t(t)], keep ^= sink[size_t(t)];
    if (keep == 42) std::printf(" ");  // uses the sums
    return double(total) / wall / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
    size_t mib = 1024;
    double seconds = 1.0;
    std::vector<int> counts;
    size_t prefetch = 0;
    std::string hint = "t0";
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--mib") && i + 1 < argc)
            mib = size_t(std::atoll(argv[++i]));
        else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = std::atof(argv[++i]);
        else if (!std::strcmp(argv[i], "--prefetch") && i + 1 < argc)
            prefetch = size_t(std::atoll(argv[++i]));
        else if (!std::strcmp(argv[i], "--hint") && i + 1 < argc)
            hint = argv[++i];
        else if (std::atoi(argv[i]) > 0)
            counts.push_back(std::atoi(argv[i]));
        else {
            std::fprintf(
                stderr,
                "usage: bench_bandwidth [--mib N] [--seconds S] [--prefetch B] [--hint t0|t1|t2|nta] "
                "THREADS [THREADS ...]\n");
            return 2;
        }
    }
    if (counts.empty()) counts = {1, 2, int(std::thread::hardware_concurrency())};
    if (prefetch > 0) {
        const char* names[] = {"t0", "t1", "t2", "nta"};
        for (int h = 0; h < 4; ++h)
            if (hint == names[h]) g_hint = h;
        if (g_hint < 0) {
            std::fprintf(stderr, "bench_bandwidth: --hint must be t0, t1, t2 or nta\n");
            return 2;
        }
        g_ahead_words = prefetch / sizeof(uint64_t);
    }
    std::vector<uint64_t> buf(mib * 1024 * 1024 / sizeof(uint64_t));
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = i * 0x9E3779B97F4A7C15ull;
    std::printf("CPU: %s (%u CPUs); buffer %zu MiB, %.1f s per count; ", cpu_model().c_str(),
                std::thread::hardware_concurrency(), mib, seconds);
    if (g_hint < 0)
        std::printf("no software prefetch\n");
    else
        std::printf("prefetch %s %zu bytes ahead\n", hint.c_str(), prefetch);
    for (int t : counts) std::printf("threads %d: %.1f GB/s\n", t, measure(buf, t, seconds));
    return 0;
}
