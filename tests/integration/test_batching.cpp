// Continuous batching against the real binary: batch invariance under mixed load, chunked prefill,
// and clients that vanish mid-stream.
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

std::string long_prompt() {
    std::string p;
    while (p.size() < 1000) p += "Tom and Sue went to the big park. They played with a red ball. ";
    return p;
}

// Filled on worker threads: no Catch2 macros there (its assertion state is not thread-safe); the test
// checks `complete` on the main thread.
struct StreamOutcome {
    std::vector<int> tokens;
    json final;
    bool complete = false;
};

// A greedy stream of one prompt; calls on_event after each event (used to trigger the long prompt).
StreamOutcome stream_tokens(uint16_t port, const std::string& prompt, int n,
                            const std::function<void(int)>& on_event) {
    Client c("127.0.0.1", port);
    StreamOutcome out;
    int events = 0;
    auto res = c.stream("POST", "/completion",
                        json{{"prompt", prompt},
                             {"n_predict", n},
                             {"temperature", 0},
                             {"stream", true},
                             {"return_tokens", true}}
                            .dump(),
                        {}, [&](const server::http::SseEvent& e) {
                            const json j = json::parse(e.data);
                            for (int t : j["tokens"]) out.tokens.push_back(t);
                            if (j["stop"] == true) out.final = j;
                            on_event(++events);
                            return true;
                        });
    out.complete = res.complete;
    return out;
}

double metric(const std::string& text, const std::string& name) {
    const auto at = text.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + name.size() + 2));
}

}  // namespace

TEST_CASE("batch invariance: four streams and a long prompt mid-way give the reference tokens",
          "[integration][threads][batching]") {
    for (const char* cap : {"0", "16"}) {
        INFO("--max-prefill-tokens " << cap);
        ServerProcess s({"-m", stories_model(), "-np", "4", "-b", "64", "-ub", "32", "-c", "4096", "-t", "2",
                         "--max-prefill-tokens", cap, "--metrics"});
        const json g = stories_golden();
        std::vector<std::string> prompts;
        std::vector<std::vector<int>> want;
        for (int i = 0; i < 4; ++i) {
            prompts.push_back(g["cases"][i]["prompt"]);
            want.push_back(g["cases"][i]["completion_tokens"].get<std::vector<int>>());
        }
        // Alone, one at a time.
        for (int i = 0; i < 4; ++i)
        {
            const StreamOutcome o = stream_tokens(s.port(), prompts[i], 96, [](int) {});
            REQUIRE(o.complete);
            REQUIRE(o.tokens == want[i]);
        }

        // Together, with a 400-token prompt arriving once the streams are generating.
        std::promise<void> go_long;
        std::atomic<bool> fired{false};
        auto long_req = std::async(std::launch::async, [&, f = go_long.get_future()]() mutable {
            f.wait();
            Client c("127.0.0.1", s.port());
            return c
                .post("/completion",
                      json{{"prompt", long_prompt()}, {"n_predict", 8}, {"temperature", 0}}.dump())
                .json();
        });
        std::vector<std::future<StreamOutcome>> streams;
        for (int i = 0; i < 4; ++i)
            streams.push_back(std::async(std::launch::async, [&, i] {
                return stream_tokens(s.port(), prompts[i], 96, [&](int n) {
                    if (i == 0 && n == 10 && !fired.exchange(true)) go_long.set_value();
                });
            }));
        std::vector<StreamOutcome> outs;
        for (auto& f : streams) outs.push_back(f.get());
        const json long_res = long_req.get();
        for (int i = 0; i < 4; ++i) {
            REQUIRE(outs[i].complete);
            REQUIRE(outs[i].tokens == want[i]);
        }
        REQUIRE(long_res["tokens_evaluated"].get<int>() >= 400);

        // Every stream got a decode step in every iteration while it generated: n tokens, n-1 steps.
        for (const auto& o : outs) REQUIRE(o.final["timings"]["decode_iterations"] == 95);
    }
}

TEST_CASE("chunked prefill: with a cap the long prompt is spread over iterations shared with decodes",
          "[integration][batching]") {
    ServerProcess s({"-m", stories_model(), "-np", "4", "-b", "64", "-ub", "32", "-c", "4096", "-t", "2",
                     "--max-prefill-tokens", "16", "--metrics"});
    // Three long-running streams, then the long prompt once they generate.
    std::promise<void> go_long;
    std::atomic<int> started{0};
    std::vector<std::future<StreamOutcome>> streams;
    for (int i = 0; i < 3; ++i)
        streams.push_back(std::async(std::launch::async, [&] {
            Client c("127.0.0.1", s.port());
            StreamOutcome out;
            bool counted = false;
            c.stream("POST", "/completion",
                     json{{"prompt", "Once upon a time"},
                          {"n_predict", 300},
                          {"ignore_eos", true},
                          {"stream", true},
                          {"temperature", 0}}
                         .dump(),
                     {}, [&](const server::http::SseEvent& e) {
                         const json j = json::parse(e.data);
                         if (!counted && ++started == 3) go_long.set_value();
                         counted = true;
                         if (j["stop"] == true) out.final = j;
                         return true;
                     });
            return out;
        }));
    go_long.get_future().wait();
    Client c("127.0.0.1", s.port());
    const json long_res =
        c.post("/completion", json{{"prompt", long_prompt()}, {"n_predict", 4}}.dump()).json();
    std::vector<StreamOutcome> outs;
    for (auto& f : streams) outs.push_back(f.get());
    const int n_prompt = long_res["tokens_evaluated"];
    const int chunks = long_res["timings"]["prompt_chunks"];
    const std::string m = c.get("/metrics").body;
    const double mixed = metric(m, "ggserve:mixed_iterations_total");
    WARN("long prompt: " << n_prompt << " tokens in " << chunks << " chunks; " << mixed
                         << " mixed iterations");
    REQUIRE(n_prompt >= 400);
    REQUIRE(chunks >= (n_prompt + 15) / 16);  // at most 16 prompt tokens per iteration
    REQUIRE(mixed >= chunks - 1);
    for (const auto& o : outs) {
        REQUIRE(o.final["tokens_predicted"] == 300);
        REQUIRE(o.final["timings"]["decode_iterations"] == 299);  // a token every iteration, prefill or not
    }
}

TEST_CASE("200 clients that disconnect mid-stream leave the server healthy with all slots idle",
          "[integration][batching][disconnect]") {
    ServerProcess s({"-m", stories_model(), "-np", "4", "-c", "2048", "-t", "1", "--metrics"});
    std::atomic<int> aborted{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < 8; ++w)
        workers.emplace_back([&, w] {
            for (int i = 0; i < 25; ++i) {
                Client c("127.0.0.1", s.port());
                const int stop_after = 1 + (w + i) % 4;
                auto r = c.stream(
                    "POST", "/v1/completions",
                    json{{"prompt", "Once upon a time"}, {"max_tokens", 400}, {"stream", true}}.dump(), {},
                    [&, n = 0](const server::http::SseEvent&) mutable { return ++n < stop_after; });
                if (r.aborted) ++aborted;
            }
        });
    for (auto& t : workers) t.join();
    REQUIRE(aborted == 200);
    Client c("127.0.0.1", s.port());
    // The server learns of each disconnect asynchronously (socket EOF): poll /slots until every slot is
    // idle, with a deadline. Without cancellation the 400-token jobs would keep all slots busy for long.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    bool all_idle = false;
    while (!all_idle && std::chrono::steady_clock::now() < deadline) {
        all_idle = true;
        for (const auto& sl : c.get("/slots").json()) all_idle = all_idle && sl["is_processing"] == false;
        if (!all_idle) std::this_thread::yield();
    }
    REQUIRE(all_idle);
    const json r = c.post("/completion", json{{"prompt", "Hello"}, {"n_predict", 4}}.dump()).json();
    REQUIRE(r["timings"]["queue_ms"].get<double>() < 1000);
    REQUIRE(c.get("/health").status == 200);
    const std::string m = c.get("/metrics").body;
    REQUIRE(metric(m, "ggserve:requests_cancelled_total") >= 190);
    REQUIRE(s.stop() == 0);  // clean shutdown
}
