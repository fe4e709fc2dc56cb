#include "server/scheduler/metrics.h"

#include <sstream>

namespace sched {

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1) {}

void Histogram::observe(double v) {
    size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i]) ++i;
    ++counts_[i];
    sum_ += v;
    ++count_;
}

double Histogram::quantile(double q) const {
    if (count_ == 0) return 0.0;
    const double target = q * (double)count_;
    uint64_t acc = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
        acc += counts_[i];
        if ((double)acc >= target) return i < bounds_.size() ? bounds_[i] : bounds_.back();
    }
    return bounds_.back();
}

std::string Histogram::render(const std::string& name, const std::string& help) const {
    std::ostringstream o;
    o << "# HELP " << name << " " << help << "\n# TYPE " << name << " histogram\n";
    uint64_t acc = 0;
    for (size_t i = 0; i < bounds_.size(); ++i) {
        acc += counts_[i];
        o << name << "_bucket{le=\"" << bounds_[i] << "\"} " << acc << "\n";
    }
    o << name << "_bucket{le=\"+Inf\"} " << count_ << "\n";
    o << name << "_sum " << sum_ << "\n" << name << "_count " << count_ << "\n";
    return o.str();
}

static std::vector<double> latency_buckets() {
    return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

Metrics::Metrics() : ttft_(latency_buckets()), itl_(latency_buckets()) {}

void Metrics::observe_ttft(double s) {
    std::lock_guard<std::mutex> lk(mu_);
    ttft_.observe(s);
}

void Metrics::observe_itl(double s) {
    std::lock_guard<std::mutex> lk(mu_);
    itl_.observe(s);
}

MetricsSnapshot Metrics::snapshot() const {
    std::lock_guard<std::mutex> lk(mu_);
    return s_;
}

std::string Metrics::render_prometheus() const {
    std::lock_guard<std::mutex> lk(mu_);
    std::ostringstream o;
    auto metric = [&](const char* name, const char* type, const char* help, double v) {
        o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n" << name << " " << v << "\n";
    };
    metric("llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed.", (double)s_.prompt_tokens_total);
    metric("llamacpp:prompt_tokens_cached_total", "counter", "Number of prompt tokens reused from the cache.",
           (double)s_.prompt_tokens_cached_total);
    metric("llamacpp:prompt_seconds_total", "counter", "Prompt process time.", s_.prompt_seconds_total);
    metric("llamacpp:tokens_predicted_total", "counter", "Number of generation tokens processed.",
           (double)s_.tokens_predicted_total);
    metric("llamacpp:tokens_predicted_seconds_total", "counter", "Predict process time.", s_.predicted_seconds_total);
    metric("llamacpp:n_decode_total", "counter", "Total number of llama_decode() calls.", (double)s_.n_decode_total);
    metric("llamacpp:n_tokens_max", "counter", "Largest observed sequence length (prompt and generation).",
           (double)s_.n_tokens_max);
    const auto all_drafters = [](const MetricsSnapshot::PerDrafter& v) {
        uint64_t sum = 0;
        for (uint64_t x : v) sum += x;
        return (double)sum;
    };
    metric("llamacpp:spec_decode_num_draft_tokens_total", "counter",
           "Speculative: draft tokens evaluated by the target, every drafter.", all_drafters(s_.draft_tokens_total));
    metric("llamacpp:spec_decode_num_accepted_tokens_total", "counter",
           "Speculative: draft tokens accepted by the target, every drafter.", all_drafters(s_.draft_accepted_total));
    metric("llamacpp:spec_decode_num_drafts_total", "counter", "Speculative: decode steps that verified a draft.",
           all_drafters(s_.draft_steps_total));
    metric("llamacpp:n_busy_slots_per_decode", "gauge", "Average number of busy slots per llama_decode() call.",
           s_.n_decode_total ? (double)s_.n_busy_slots_total / (double)s_.n_decode_total : 0.0);
    metric("llamacpp:prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.",
           s_.prompt_seconds_total > 0 ? (double)s_.prompt_tokens_total / s_.prompt_seconds_total : 0.0);
    metric("llamacpp:predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.",
           s_.predicted_seconds_total > 0 ? (double)s_.tokens_predicted_total / s_.predicted_seconds_total : 0.0);
    metric("llamacpp:kv_cache_usage_ratio", "gauge", "KV-cache usage. 1 means 100 percent usage.", s_.kv_cache_usage_ratio);
    metric("llamacpp:kv_cache_tokens", "gauge", "KV-cache tokens.", (double)s_.kv_cache_tokens);
    metric("llamacpp:requests_processing", "gauge", "Number of requests processing.", s_.requests_processing);
    metric("llamacpp:requests_deferred", "gauge", "Number of requests deferred.", s_.requests_deferred);
    metric("ggserve:requests_total", "counter", "Generation requests accepted.", (double)s_.requests_total);
    metric("ggserve:requests_cancelled_total", "counter", "Requests cancelled because the client went away.",
           (double)s_.requests_cancelled_total);
    metric("ggserve:requests_preempted_total", "counter",
           "Times a generating request waited in host memory to give its KV cells to an older one (-kvu).",
           (double)s_.requests_preempted_total);
    metric("ggserve:embedding_inputs_in_generation_steps_total", "counter",
           "Embedding inputs evaluated in the decode call of a generation step.", (double)s_.embed_inputs_riding_total);
    metric("ggserve:embedding_inputs_alone_total", "counter", "Embedding inputs evaluated in decode calls of their own.",
           (double)s_.embed_inputs_alone_total);
    metric("ggserve:iterations_total", "counter", "Scheduler iterations that evaluated a batch.", (double)s_.iterations_total);
    metric("ggserve:mixed_iterations_total", "counter",
           "Iterations whose batch held both decode tokens and a prompt chunk.", (double)s_.mixed_iterations_total);
    metric("ggserve:prompt_chunks_total", "counter", "Prompt chunks evaluated (a long prompt takes several).",
           (double)s_.prompt_chunks_total);
    const auto per_drafter = [&](const char* name, const char* help, const MetricsSnapshot::PerDrafter& v) {
        o << "# HELP " << name << " " << help << "\n# TYPE " << name << " counter\n";
        for (size_t i = 0; i < v.size(); ++i)
            o << name << "{drafter=\"" << engine::spec::drafter_name((engine::spec::DrafterType)i) << "\"} " << v[i]
              << "\n";
    };
    per_drafter("ggserve:draft_tokens_total", "Speculative draft tokens evaluated by the target.",
                s_.draft_tokens_total);
    per_drafter("ggserve:draft_accepted_total", "Speculative draft tokens the target accepted.",
                s_.draft_accepted_total);
    per_drafter("ggserve:draft_steps_total", "Decode steps that verified a draft.", s_.draft_steps_total);
    {
        const size_t la = (size_t)engine::spec::DrafterType::Lookahead;
        const double steps = (double)s_.draft_steps_total[la], evaluated = (double)s_.draft_tokens_total[la],
                     accepted = (double)s_.draft_accepted_total[la];
        metric("ggserve:lookahead_pool_ngrams", "gauge", "N-grams in the lookahead pools of the busy slots.",
               (double)s_.lookahead_pool_ngrams);
        metric("ggserve:lookahead_accepted_per_step", "gauge",
               "Lookahead: branch tokens accepted per lookahead step (besides the step's own token), since start.",
               steps > 0 ? accepted / steps : 0.0);
        metric("ggserve:lookahead_evaluated_per_accepted", "gauge",
               "Lookahead window cost: extra tokens evaluated (window and branches) per accepted branch token, since "
               "start (0 while none was accepted).",
               accepted > 0 ? evaluated / accepted : 0.0);
    }
    const HostCacheStats& hc = s_.host_cache;
    metric("ggserve:prompt_cache_ram_entries", "gauge", "Prompt states kept in the host-memory cache (--cache-ram).",
           (double)hc.entries);
    metric("ggserve:prompt_cache_ram_bytes", "gauge", "Bytes the host-memory prompt cache holds.", (double)hc.bytes);
    metric("ggserve:prompt_cache_ram_saves_total", "counter", "Prompt states kept in the host-memory cache.",
           (double)hc.saves);
    metric("ggserve:prompt_cache_ram_hits_total", "counter",
           "Prompts whose prefix was restored from the host-memory cache.", (double)hc.hits);
    metric("ggserve:prompt_cache_ram_tokens_restored_total", "counter",
           "Prompt tokens restored from the host-memory cache instead of evaluated.", (double)hc.tokens_restored);
    metric("ggserve:prompt_cache_ram_evictions_total", "counter",
           "Prompt states dropped from the host-memory cache (its limit, or a longer state of the same prompt).",
           (double)hc.evictions);
    o << ttft_.render("ggserve:time_to_first_token_seconds", "Time from request arrival to its first token.");
    o << itl_.render("ggserve:inter_token_latency_seconds", "Time between consecutive tokens of a stream.");
    return o.str();
}

}  // namespace sched
