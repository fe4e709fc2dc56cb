// Vertex AI custom-container compatibility (llama-server's AIP_* variables) against the real binary on
// stories260K: AIP_HTTP_PORT over --port, the health route, and the prediction protocol whose instances
// each name an endpoint ("@requestFormat") and get that endpoint's answer, errors per instance; bad
// settings stop the start.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

// A port on 127.0.0.1 that nothing listens on now.
int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    REQUIRE(bind(fd, (sockaddr*)&addr, sizeof addr) == 0);
    REQUIRE(getsockname(fd, (sockaddr*)&addr, &len) == 0);
    close(fd);
    return ntohs(addr.sin_port);
}

std::string error_message(const json& j) { return j["error"]["message"].get<std::string>(); }

}  // namespace

TEST_CASE("vertex: AIP_MODE=PREDICTION serves the health and predict routes on AIP_HTTP_PORT",
          "[integration][vertex]") {
    const int port = free_port();
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--api-key", "k"}, std::chrono::seconds(60),
                    ServerProcess::WaitFor::Ready,
                    {"AIP_MODE=PREDICTION", "AIP_HTTP_PORT=" + std::to_string(port), "AIP_HEALTH_ROUTE=ping"});
    CHECK(s.port() == port);  // over --port 0
    Client c("127.0.0.1", s.port());
    const server::http::Headers key = {{"Authorization", "Bearer k"}};
    const auto ping = c.get("/ping");  // public, as /health
    CHECK(ping.status == 200);
    CHECK(ping.json() == c.get("/health").json());

    const json messages = json::array({{{"role", "user"}, {"content", "Once upon a time"}}});
    const json chat{{"messages", messages}, {"max_tokens", 8}, {"temperature", 0}};
    const json completion{{"prompt", "Once upon a time"}, {"n_predict", 8}, {"temperature", 0}};
    json chat_instance = chat, completion_instance = completion;
    chat_instance["@requestFormat"] = "chatCompletions";
    completion_instance["@requestFormat"] = "/completion";
    completion_instance["stream"] = true;  // predictions are whole answers
    const json body{{"instances",
                     {chat_instance, completion_instance, {{"@requestFormat", "tokenize"}, {"content", "hello"}},
                      {{"@requestFormat", "nope"}}, 5, {{"content", "no format"}}}}};
    const auto r = c.post("/predict", body.dump(), key);
    REQUIRE(r.status == 200);
    const json p = r.json()["predictions"];
    REQUIRE(p.size() == 6);
    CHECK(p[0]["choices"][0]["message"]["content"] ==
          c.post("/v1/chat/completions", chat.dump(), key).json()["choices"][0]["message"]["content"]);
    CHECK(p[1]["content"] == c.post("/completion", completion.dump(), key).json()["content"]);
    CHECK(p[2]["tokens"] == c.post("/tokenize", json{{"content", "hello"}}.dump(), key).json()["tokens"]);
    CHECK(error_message(p[3]).find("no handler registered for @requestFormat: nope") != std::string::npos);
    CHECK(error_message(p[4]).find("must be a JSON object") != std::string::npos);
    CHECK(error_message(p[5]).find("@requestFormat") != std::string::npos);

    // The caller's key is what the instances go with: without it, the route itself is refused.
    CHECK(c.post("/predict", body.dump()).status == 401);
    CHECK(c.post("/predict", "{", key).status == 400);
    CHECK(c.post("/predict", json{{"instances", 3}}.dump(), key).status == 400);
    json many{{"instances", json::array()}};
    for (int i = 0; i < 129; ++i) many["instances"].push_back({{"@requestFormat", "tokenize"}, {"content", "a"}});
    const auto too_many = c.post("/predict", many.dump(), key);
    CHECK(too_many.status == 400);
    CHECK(error_message(too_many.json()).find("maximum size of 128") != std::string::npos);
}

TEST_CASE("vertex: a predict route that is one of the server's own, a bad port or TLS stop the start",
          "[integration][vertex]") {
    const std::string serve = "serve -m " + stories_model() + " -c 512 -t 1 --port 0 --no-warmup";
    struct Case {
        std::string env, extra, message;
        int code;
    };
    for (const Case& k : {Case{"AIP_MODE=PREDICTION AIP_PREDICT_ROUTE=completion", "", "one of the server's own routes", 1},
                          Case{"AIP_MODE=PREDICTION AIP_HTTP_PORT=http", "", "AIP_HTTP_PORT", 2},
                          Case{"AIP_MODE=PREDICTION", "--ssl-key-file /nonexistent --ssl-cert-file /nonexistent",
                               "cannot be used with --ssl-key-file", 2}}) {
        INFO(k.env);
        const CliResult r = run_ggserve_env(k.env, serve + " " + k.extra);
        CHECK(r.code == k.code);
        CHECK(r.output.find(k.message) != std::string::npos);
    }
    // Without AIP_MODE=PREDICTION the variables mean nothing.
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1"}, std::chrono::seconds(60),
                    ServerProcess::WaitFor::Ready, {"AIP_MODE=OTHER", "AIP_PREDICT_ROUTE=/predict"});
    Client c("127.0.0.1", s.port());
    CHECK(c.post("/predict", json{{"instances", json::array()}}.dump()).status == 404);
}
