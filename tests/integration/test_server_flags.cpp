// llama-server's serving options: --api-prefix (every route under a path), --reuse-port (servers
// sharing a port) and --sse-ping-interval (comments into a silent stream), with their LLAMA_ARG_*
// variables.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_process.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

std::string raw_post(const std::string& path, const json& body) {
    const std::string b = body.dump();
    return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(b.size()) + "\r\n\r\n" + b;
}

}  // namespace

TEST_CASE("api prefix: every route is served under it and nothing outside it", "[integration][prefix]") {
    for (const bool by_env : {false, true}) {
        INFO((by_env ? "LLAMA_ARG_API_PREFIX" : "--api-prefix"));
        ServerProcess s(
            by_env ? small_stories_args({}) : small_stories_args({"--api-prefix", "/llm/v2"}), std::chrono::seconds(60),
            ServerProcess::WaitFor::Ready,
            by_env ? std::vector<std::string>{"LLAMA_ARG_API_PREFIX=/llm/v2"} : std::vector<std::string>{});
        Client c("127.0.0.1", s.port());
        CHECK(c.get("/llm/v2/health").json()["status"] == "ok");
        CHECK(c.get("/llm/v2/v1/models").json()["data"][0]["id"].is_string());
        CHECK(c.get("/llm/v2/props").json()["total_slots"] == 1);
        const auto chat =
            c.post("/llm/v2/v1/chat/completions",
                   json{{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 4}}.dump());
        CHECK(chat.status == 200);
        CHECK(chat.json()["choices"][0]["message"]["content"].is_string());
        const auto completion =
            c.post("/llm/v2/completion", json{{"prompt", "Once"}, {"n_predict", 4}}.dump());
        CHECK(completion.status == 200);
        for (const char* outside : {"/health", "/v1/models", "/llm/health", "/llm/v2x/health", "/"}) {
            INFO(outside);
            const auto r = c.get(outside);
            CHECK(r.status == 404);
            CHECK(r.json()["error"]["code"] == 404);
        }
        CHECK(c.post("/completion", json{{"prompt", "Once"}, {"n_predict", 4}}.dump()).status == 404);
        // The web UI's place moves too (a build without one says so there).
        const auto page = c.get("/llm/v2/");
        CHECK((page.status == 200 || page.body.find("built without its web UI") != std::string::npos));
    }
    for (const char* bad : {"llm", "/llm/", "/a b", "/"}) {
        INFO(bad);
        const CliResult r =
            run_ggserve("serve --port 0 -m " + stories_model() + " --api-prefix '" + bad + "'");
        CHECK(r.code == 2);
        CHECK(r.output.find("must be a path such as /llm") != std::string::npos);
    }
}

TEST_CASE("reuse port: a second server listens on the same port", "[integration][reuse-port]") {
    ServerProcess first(small_stories_args({"--port", "0", "--reuse-port"}));
    const std::string port = std::to_string(first.port());
    // Without the option on both sockets the port is taken.
    const CliResult taken = run_ggserve("serve -m " + stories_model() + " --port " + port);
    CHECK(taken.code != 0);
    CHECK(taken.output.find("cannot listen") != std::string::npos);
    ServerProcess second(small_stories_args({"--port", port, "--reuse-port"}), std::chrono::seconds(60),
                         ServerProcess::WaitFor::Ready, {"LLAMA_ARG_REUSE_PORT=1"});
    CHECK(second.port() == first.port());
    CHECK(second.log().find("ready:") != std::string::npos);
    Client c("127.0.0.1", first.port());
    CHECK(c.get("/health").json()["status"] == "ok");
    // The environment variable alone sets it too.
    ServerProcess third(small_stories_args({"--port", port}), std::chrono::seconds(60), ServerProcess::WaitFor::Ready,
                        {"LLAMA_ARG_REUSE_PORT=1"});
    CHECK(third.port() == first.port());
}

TEST_CASE("SSE ping interval: a stream waiting for its slot gets ping comments", "[integration][ping]") {
    ServerProcess s(small_stories_args({"--sse-ping-interval", "1", "--context-shift"}));
    // The only slot generates until its client goes; meanwhile the second stream waits, silent.
    Client busy("127.0.0.1", s.port()), waiting("127.0.0.1", s.port());
    busy.send_raw(raw_post(
        "/completion",
        {{"prompt", "Once upon a time"}, {"n_predict", 100000}, {"ignore_eos", true}, {"stream", true}}));
    busy.read_until("data: ");
    waiting.send_raw(raw_post("/v1/completions", {{"prompt", "Once"}, {"max_tokens", 4}, {"stream", true}}));
    const std::string before = waiting.read_until(": ping\n\n");
    CHECK(before.find("data:") == std::string::npos);
    busy.close();  // the first request is cancelled, the waiting one runs
    const std::string rest = waiting.read_until("data: [DONE]");
    CHECK(rest.find("\"text\"") != std::string::npos);
    const CliResult bad = run_ggserve("serve --port 0 -m " + stories_model() + " --sse-ping-interval -2");
    CHECK(bad.code == 2);
}
