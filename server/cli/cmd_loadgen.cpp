// `ggserve loadgen`: drives a running server with N concurrent streams and a mix of short and long
// prompts, and prints one JSON object: requests ok/failed, aggregate prompt and generation tokens/s,
// time-to-first-token and inter-token-latency percentiles.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "server/cli/args.h"
#include "server/cli/commands.h"
#include "server/http/client.h"

namespace cli {

namespace {

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t i = std::min(v.size() - 1, (size_t)(q * (double)(v.size() - 1) + 0.5));
    return v[i];
}

std::string make_prompt(int approx_tokens, std::mt19937& rng) {
    static const char* words[] = {"the",   "little", "dog", "ran",    "to",   "a",     "big",
                                  "park",  "and",    "saw", "red",    "ball", "Lily",  "Tom",
                                  "happy", "tree",   "sun", "played", "with", "friend"};
    std::string p = "Once upon a time";
    for (int i = 0; i < approx_tokens; ++i) p += std::string(" ") + words[rng() % 20];
    return p;
}

}  // namespace

int cmd_loadgen(int argc, char** argv) {
    std::string host = "127.0.0.1", api_key;
    int port = 8080, concurrency = 4, requests = 32, max_tokens = 64, short_tokens = 8, long_tokens = 400;
    double long_ratio = 0.25;
    uint32_t seed = 1;
    ArgParser ap("loadgen");
    ap.option("--host", "HOST", "server address (default 127.0.0.1)", &host);
    ap.option("--port", "PORT", "server port (default 8080)", &port);
    ap.option("--api-key", "KEY", "API key to send", &api_key);
    ap.option("-c,--concurrency", "N", "concurrent streams (default 4)", &concurrency);
    ap.option("-n,--requests", "N", "total requests (default 32)", &requests);
    ap.option("--max-tokens", "N", "tokens to generate per request (default 64)", &max_tokens);
    ap.option("--short-prompt", "N", "approximate tokens of a short prompt (default 8)", &short_tokens);
    ap.option("--long-prompt", "N", "approximate tokens of a long prompt (default 400)", &long_tokens);
    ap.option("--long-ratio", "R", "fraction of requests with a long prompt (default 0.25)", &long_ratio);
    ap.option("--seed", "N", "seed of the prompt mix (default 1)", &seed);
    try {
        if (!ap.parse(argc, argv)) return 0;
        if (concurrency < 1 || requests < 1 || max_tokens < 1) throw ArgError("counts must be positive");
        if (long_ratio < 0 || long_ratio > 1) throw ArgError("--long-ratio must be in [0, 1]");
        if (port <= 0 || port > 65535) throw ArgError("--port must be in [1, 65535]");
    } catch (const ArgError& e) {
        std::fprintf(stderr, "ggserve loadgen: %s\n", e.what());
        return 2;
    }

    std::mutex mu;
    std::vector<double> ttft, itl;
    uint64_t prompt_tokens = 0, gen_tokens = 0;
    int ok = 0, failed = 0;
    std::string first_error;
    std::atomic<int> next{0};
    const auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (int w = 0; w < concurrency; ++w)
        threads.emplace_back([&, w] {
            std::mt19937 rng(seed * 7919u + (uint32_t)w);
            server::http::Client client(host, (uint16_t)port, {std::chrono::seconds(600)});
            server::http::Headers headers;
            if (!api_key.empty()) headers.set("Authorization", "Bearer " + api_key);
            for (int i = next++; i < requests; i = next++) {
                std::mt19937 prng(seed + (uint32_t)i);
                const bool is_long = std::uniform_real_distribution<double>(0, 1)(prng) < long_ratio;
                const std::string prompt = make_prompt(is_long ? long_tokens : short_tokens, prng);
                const nlohmann::json body{{"prompt", prompt},   {"n_predict", max_tokens},
                                          {"stream", true},     {"return_tokens", true},
                                          {"temperature", 0.8}, {"ignore_eos", true}};
                std::vector<double> my_itl;
                double my_ttft = -1;
                int n_prompt = 0, n_gen = 0;
                const auto start = Clock::now();
                auto last = start;
                try {
                    auto r = client.stream(
                        "POST", "/completion", body.dump(), headers, [&](const server::http::SseEvent& e) {
                            const auto now = Clock::now();
                            const auto j = nlohmann::json::parse(e.data);
                            if (j.contains("error")) return false;
                            const size_t n = j.contains("tokens") ? j["tokens"].size() : 0;
                            if (n > 0) {
                                if (my_ttft < 0)
                                    my_ttft = std::chrono::duration<double>(now - start).count();
                                else
                                    my_itl.push_back(std::chrono::duration<double>(now - last).count());
                                last = now;
                            }
                            if (j.value("stop", false)) {
                                n_prompt = j.value("tokens_evaluated", 0);
                                n_gen = j.value("tokens_predicted", 0);
                            }
                            return true;
                        });
                    std::lock_guard<std::mutex> lk(mu);
                    if (r.status == 200 && r.complete && n_gen > 0) {
                        ++ok;
                        prompt_tokens += (uint64_t)n_prompt;
                        gen_tokens += (uint64_t)n_gen;
                        if (my_ttft >= 0) ttft.push_back(my_ttft);
                        itl.insert(itl.end(), my_itl.begin(), my_itl.end());
                    } else {
                        ++failed;
                        if (first_error.empty())
                            first_error = "HTTP " + std::to_string(r.status) + " " + r.body + r.error;
                    }
                } catch (const std::exception& e) {
                    std::lock_guard<std::mutex> lk(mu);
                    ++failed;
                    if (first_error.empty()) first_error = e.what();
                }
            }
        });
    for (auto& t : threads) t.join();
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    nlohmann::json out{{"requests_ok", ok},
                       {"requests_failed", failed},
                       {"concurrency", concurrency},
                       {"wall_seconds", wall},
                       {"prompt_tokens", prompt_tokens},
                       {"generated_tokens", gen_tokens},
                       {"prompt_tokens_per_second", prompt_tokens / wall},
                       {"generated_tokens_per_second", gen_tokens / wall},
                       {"ttft_ms_p50", 1000 * percentile(ttft, 0.50)},
                       {"ttft_ms_p99", 1000 * percentile(ttft, 0.99)},
                       {"itl_ms_p50", 1000 * percentile(itl, 0.50)},
                       {"itl_ms_p99", 1000 * percentile(itl, 0.99)},
                       {"itl_ms_max", 1000 * percentile(itl, 1.0)}};
    if (!first_error.empty()) out["first_error"] = first_error;
    std::puts(out.dump(2).c_str());
    return failed == 0 ? 0 : 1;
}

}  // namespace cli
