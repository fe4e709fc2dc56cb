// The engine thread's step structure against the real binary: one request's failure leaves the others
// (and their caches) alone.
#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <nlohmann/json.hpp>

#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

// Filled on worker threads: no Catch2 macros there (its assertion state is not thread-safe); the test
// checks `complete` on the main thread.
struct Streamed {
    std::vector<int> tokens;
    std::string text;
    json final;
    std::string error;
    bool complete = false;
};

Streamed stream_completion(uint16_t port, json body, const std::function<void(int)>& on_event = {}) {
    Client c("127.0.0.1", port);
    body["stream"] = true;
    body["return_tokens"] = true;
    Streamed out;
    int events = 0;
    auto res = c.stream("POST", "/completion", body.dump(), {}, [&](const server::http::SseEvent& e) {
        const json j = json::parse(e.data);
        if (j.contains("error")) {
            out.error = j["error"]["message"];
            return true;
        }
        for (int t : j["tokens"]) out.tokens.push_back(t);
        out.text += j["content"].get<std::string>();
        if (j["stop"] == true) out.final = j;
        if (on_event) on_event(++events);
        return true;
    });
    out.complete = res.complete;
    return out;
}

}  // namespace

TEST_CASE("a request that fails mid-batch fails alone: the others finish with the reference tokens",
          "[integration][scheduler]") {
    ServerProcess s({"-m", stories_model(), "-np", "4", "-c", "2048", "-t", "2"});
    const json g = stories_golden();
    // Every token banned: the first sample of this request throws on the engine thread, in an
    // iteration that also carries the other streams' decode steps.
    json ban_all = json::array();
    for (int t = 0; t < 512; ++t) ban_all.push_back(json::array({t, false}));

    std::promise<void> go;
    std::atomic<bool> fired{false};
    auto bad = std::async(std::launch::async, [&, f = go.get_future()]() mutable {
        f.wait();
        Client c("127.0.0.1", s.port());
        return c.post("/completion", json{{"prompt", "Once upon a time"}, {"n_predict", 8}, {"logit_bias", ban_all}}.dump());
    });
    std::vector<std::future<Streamed>> streams;
    for (int i = 0; i < 3; ++i)
        streams.push_back(std::async(std::launch::async, [&, i] {
            return stream_completion(s.port(),
                                     {{"prompt", g["cases"][i]["prompt"]}, {"n_predict", 96}, {"temperature", 0}},
                                     [&](int n) {
                                         if (i == 0 && n == 5 && !fired.exchange(true)) go.set_value();
                                     });
        }));
    for (int i = 0; i < 3; ++i) {
        const Streamed o = streams[(size_t)i].get();
        REQUIRE(o.complete);
        REQUIRE(o.error.empty());
        REQUIRE(o.tokens == g["cases"][i]["completion_tokens"].get<std::vector<int>>());
    }
    const auto bad_res = bad.get();
    REQUIRE(bad_res.status == 400);
    REQUIRE(bad_res.json()["error"]["message"].get<std::string>().find("no token can be sampled") !=
            std::string::npos);

    // The streams' slots kept their caches: the same prompt again reuses all but its last token.
    Client c("127.0.0.1", s.port());
    const json again = c.post("/completion", json{{"prompt", g["cases"][1]["prompt"]}, {"n_predict", 4},
                                                   {"temperature", 0}}.dump()).json();
    REQUIRE(again["tokens_cached"].get<int>() == again["tokens_evaluated"].get<int>() - 1);
    REQUIRE(c.get("/health").status == 200);
}

TEST_CASE("streamed text equals the non-streamed text, token for token", "[integration][scheduler]") {
    ServerProcess s({"-m", stories_model(), "-np", "2", "-c", "2048", "-t", "2"});
    const json g = stories_golden();
    Client c("127.0.0.1", s.port());
    for (int i = 0; i < 3; ++i) {
        const json body{{"prompt", g["cases"][i]["prompt"]}, {"n_predict", 64}, {"temperature", 0},
                        {"return_tokens", true}, {"stop", json::array({"park"})}};
        const json whole = c.post("/completion", body.dump()).json();
        const Streamed st = stream_completion(s.port(), body);
        REQUIRE(st.complete);
        REQUIRE(st.text == whole["content"].get<std::string>());
        REQUIRE(st.tokens == whole["tokens"].get<std::vector<int>>());
        REQUIRE(st.final["stop_type"] == whole["stop_type"]);
    }
}
