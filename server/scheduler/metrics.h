// Server metrics, updated by the engine thread and rendered in Prometheus text format for /metrics.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine/speculative/drafter.h"
#include "server/scheduler/host_prompt_cache.h"

namespace sched {

class Histogram {
public:
    explicit Histogram(std::vector<double> upper_bounds);
    void observe(double v);
    // Prometheus exposition lines for `name` (bucket, sum, count).
    std::string render(const std::string& name, const std::string& help) const;
    uint64_t count() const { return count_; }
    // Approximate quantile from the buckets (upper bound of the bucket holding it).
    double quantile(double q) const;

private:
    std::vector<double> bounds_;
    std::vector<uint64_t> counts_;
    double sum_ = 0.0;
    uint64_t count_ = 0;
};

struct MetricsSnapshot {
    uint64_t prompt_tokens_total = 0;
    uint64_t prompt_tokens_cached_total = 0;  // prompt tokens a request found in its slot's cache
    uint64_t n_tokens_max = 0;                // longest sequence seen in a slot's cache (prompt and generated tokens)
    uint64_t tokens_predicted_total = 0;
    double prompt_seconds_total = 0.0;
    double predicted_seconds_total = 0.0;
    uint64_t n_decode_total = 0;        // decode calls
    uint64_t n_busy_slots_total = 0;    // sum of busy slots over decode calls
    uint64_t iterations_total = 0;      // scheduler iterations that ran a batch
    uint64_t mixed_iterations_total = 0;  // iterations with both decode tokens and a prompt chunk
    uint64_t prompt_chunks_total = 0;   // prompt chunks evaluated
    uint64_t requests_total = 0;
    uint64_t requests_cancelled_total = 0;
    uint64_t requests_preempted_total = 0;  // shared context: generating requests swapped out for room
    // Embedding inputs evaluated in a generation step's decode call (riding along) and in calls of their own.
    uint64_t embed_inputs_riding_total = 0;
    uint64_t embed_inputs_alone_total = 0;
    int requests_processing = 0;
    int requests_deferred = 0;
    double kv_cache_usage_ratio = 0.0;
    uint64_t kv_cache_tokens = 0;
    // Speculative decoding, per drafter (indexed by engine::spec::DrafterType).
    using PerDrafter = std::array<uint64_t, engine::spec::kDrafterTypes>;
    PerDrafter draft_tokens_total{};
    PerDrafter draft_accepted_total{};
    PerDrafter draft_steps_total{};
    uint64_t lookahead_pool_ngrams = 0;  // n-grams in the pools of the slots running lookahead
    HostCacheStats host_cache;           // the host-memory prompt cache (--cache-ram)
};

class Metrics {
public:
    Metrics();
    template <typename F>
    void update(F&& f) {
        std::lock_guard<std::mutex> lk(mu_);
        f(s_);
    }
    void observe_ttft(double seconds);
    void observe_itl(double seconds);
    MetricsSnapshot snapshot() const;
    std::string render_prometheus() const;

private:
    mutable std::mutex mu_;
    MetricsSnapshot s_;
    Histogram ttft_, itl_;
};

}  // namespace sched
