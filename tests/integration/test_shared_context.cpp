// Slots sharing the whole context (-kvu, and -np -1: llama-server's "auto", 4 slots with kv_unified):
// each slot may use all -c cells; when concurrent requests need more cells than the cache has, the newest
// generating request waits in host memory and goes on later from the same state, so every request
// still gets what it gets alone (llama-server 0.7.0 answers all of them 500 "Context size has been
// exceeded" there).
#include <catch2/catch.hpp>
#include <future>

#include "context_util.h"

using namespace ctxtest;
using server::http::Client;

namespace {

std::string words(size_t from, size_t n) {
    static const char* text[] = {"Once", "upon", "a", "time", "there", "was", "a", "little", "girl", "named",
                                 "Lily", "who", "loved", "to", "play", "in", "the", "park", "with", "her",
                                 "friends", "and", "her", "big", "red", "ball"};
    std::string out;
    for (size_t i = 0; i < n; ++i) {
        if (i) out += ' ';
        out += text[(from + i) % (sizeof text / sizeof *text)];
    }
    return out;
}

// The request of client i: a prompt of ~n_words words, n tokens, greedy or seeded sampling.
json request_of(int i, size_t n_words, int n, float temperature) {
    return {{"prompt", words((size_t)i * 3, n_words)},
            {"n_predict", n},
            {"ignore_eos", true},
            {"temperature", temperature},
            {"seed", 42 + i},
            {"cache_prompt", false},
            {"return_tokens", true}};
}

// Filled on worker threads (no Catch2 macros there).
struct Outcome {
    int status = 0;
    json body;
};

// Polls /slots until no slot is processing (a cancelled request's slot is freed once the server sees its
// client gone); false after 60 s.
bool all_idle(uint16_t port) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        Client c("127.0.0.1", port);
        bool busy = false;
        for (const json& sl : c.get("/slots").json()) busy = busy || sl["is_processing"] == true;
        if (!busy) return true;
        std::this_thread::yield();
    }
    return false;
}

Outcome post(uint16_t port, const json& body) {
    Client c("127.0.0.1", port);
    const auto r = c.post("/completion", body.dump());
    Outcome o;
    o.status = r.status;
    o.body = json::parse(r.body, nullptr, false);
    return o;
}

// Each request alone, then all at once: the same tokens, every one answered 200.
void check_overcommitted(uint16_t port, size_t n_words, int n, float temperature, int clients) {
    std::vector<json> alone;
    for (int i = 0; i < clients; ++i) alone.push_back(complete(port, "", 0, request_of(i, n_words, n, temperature)));
    std::vector<std::future<Outcome>> futs;
    for (int i = 0; i < clients; ++i)
        futs.push_back(std::async(std::launch::async, post, port, request_of(i, n_words, n, temperature)));
    for (int i = 0; i < clients; ++i) {
        const Outcome o = futs[(size_t)i].get();
        INFO("client " << i << ": " << o.body.dump().substr(0, 300));
        REQUIRE(o.status == 200);
        REQUIRE(o.body["tokens_predicted"] == n);
        REQUIRE(o.body["tokens"] == alone[(size_t)i]["tokens"]);
        REQUIRE(o.body["content"] == alone[(size_t)i]["content"]);
    }
}

}  // namespace

TEST_CASE("llama-server's auto slots (-np -1 and the default): 4 slots, each with the whole context",
          "[integration][context][shared]") {
    std::vector<std::string> args{"-m", stories_model(), "-c", "1024", "-t", "2"};
    SECTION("-np -1") {
        args.push_back("-np");
        args.push_back("-1");
    }
    SECTION("no -np") {}
    ServerProcess s(args);
    Client c("127.0.0.1", s.port());
    const json props = c.get("/props").json();
    REQUIRE(props["total_slots"] == 4);
    REQUIRE(props["default_generation_settings"]["n_ctx"] == 1024);
    const json slots = c.get("/slots").json();
    REQUIRE(slots.size() == 4);
    for (const json& sl : slots) REQUIRE(sl["n_ctx"] == 1024);
    // A prompt longer than a quarter of the context is served (with -np 4 alone it is a 400).
    const json r = complete(s.port(), words(0, 400), 8);
    REQUIRE(r["tokens_evaluated"].get<int>() > 256);
    REQUIRE(r["tokens_predicted"] == 8);
}

TEST_CASE("shared or split context: -kvu, LLAMA_ARG_KV_UNIFIED and --no-kv-unified", "[integration][context][shared]") {
    SECTION("-kvu") {
        ServerProcess s({"-m", stories_model(), "-c", "512", "-np", "2", "-kvu", "-t", "1"});
        Client c("127.0.0.1", s.port());
        for (const json& sl : c.get("/slots").json()) REQUIRE(sl["n_ctx"] == 512);
    }
    SECTION("LLAMA_ARG_KV_UNIFIED") {
        ServerProcess s({"-m", stories_model(), "-c", "512", "-np", "2", "-t", "1"}, std::chrono::seconds(60),
                        ServerProcess::WaitFor::Ready, {"LLAMA_ARG_KV_UNIFIED=1"});
        Client c("127.0.0.1", s.port());
        for (const json& sl : c.get("/slots").json()) REQUIRE(sl["n_ctx"] == 512);
    }
    SECTION("--no-kv-unified") {
        ServerProcess s({"-m", stories_model(), "-c", "512", "-np", "2", "--no-kv-unified", "-t", "1"});
        Client c("127.0.0.1", s.port());
        for (const json& sl : c.get("/slots").json()) REQUIRE(sl["n_ctx"] == 256);
        Client c2("127.0.0.1", s.port());
        const auto r = c2.post("/completion", json{{"prompt", words(0, 300)}, {"n_predict", 4}}.dump());
        REQUIRE(r.status == 400);
        REQUIRE(r.json()["error"]["type"] == "exceed_context_size_error");
    }
}

TEST_CASE("requests needing more cells than the shared context has all finish with their own output",
          "[integration][context][shared]") {
    // 4 x (~410 prompt + 400 generated) tokens on 1024 cells: the newest generating requests wait in host
    // memory while older ones finish.
    ServerProcess s({"-m", stories_model(), "-c", "1024", "-np", "-1", "-t", "2", "--metrics"});
    SECTION("greedy") { check_overcommitted(s.port(), 300, 400, 0.0f, 4); }
    SECTION("seeded sampling") { check_overcommitted(s.port(), 50, 700, 0.8f, 4); }
    REQUIRE(metric(s.port(), "ggserve:requests_preempted_total") > 0);
    REQUIRE(s.log().find("waits in host memory") != std::string::npos);
    // Every slot idle again, and a new request is served.
    REQUIRE(all_idle(s.port()));
    REQUIRE(complete(s.port(), "Once upon a time", 8)["tokens_predicted"] == 8);
}

TEST_CASE("a shared context with speculative decoding and a cancelled waiting request",
          "[integration][threads][context][shared]") {
    ServerProcess s({"-m", stories_model(), "-c", "1024", "-np", "3", "-kvu", "-t", "2", "--metrics",
                     "--spec-type", "ngram-mod,lookahead"});
    check_overcommitted(s.port(), 300, 400, 0.0f, 3);
    REQUIRE(metric(s.port(), "ggserve:requests_preempted_total") > 0);

    // A streaming client that goes away while its request may be waiting in host memory frees its slot;
    // the others finish as they would alone.
    const json quitter = request_of(7, 300, 600, 0.0f);
    std::vector<json> alone{complete(s.port(), "", 0, request_of(0, 300, 300, 0.0f)),
                            complete(s.port(), "", 0, request_of(1, 300, 300, 0.0f))};
    std::vector<std::future<Outcome>> futs;
    futs.push_back(std::async(std::launch::async, post, s.port(), request_of(0, 300, 300, 0.0f)));
    futs.push_back(std::async(std::launch::async, post, s.port(), request_of(1, 300, 300, 0.0f)));
    {
        Client c("127.0.0.1", s.port());
        json body = quitter;
        body["stream"] = true;
        int events = 0;
        c.stream("POST", "/completion", body.dump(), {}, [&](const server::http::SseEvent&) {
            return ++events < 200;  // stops reading after 200 events: the connection closes
        });
    }
    for (size_t i = 0; i < futs.size(); ++i) {
        const Outcome o = futs[i].get();
        REQUIRE(o.status == 200);
        REQUIRE(o.body["tokens"] == alone[i]["tokens"]);
    }
    REQUIRE(all_idle(s.port()));
    REQUIRE(complete(s.port(), "Once upon a time", 8)["tokens_predicted"] == 8);
}
