// llama-server's CORS options on a real server: --cors-origins, --cors-methods, --cors-headers,
// --cors-credentials / --no-cors-credentials, their LLAMA_ARG_* variables, the startup errors, the
// localhost default that --tools brings, and router mode (the router answers the browser).
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_process.h"
#include "server/http/client.h"
#include "server_process.h"

namespace fs = std::filesystem;
using nlohmann::json;
using server::http::Client;
using server::http::Headers;

namespace {

Headers origin(const std::string& o) { return Headers{{"Origin", o}}; }

Headers preflight(const std::string& o) {
    return Headers{{"Origin", o},
                   {"Access-Control-Request-Method", "POST"},
                   {"Access-Control-Request-Headers", "authorization, content-type"}};
}

std::string completion_body() { return json{{"prompt", "Once"}, {"n_predict", 2}}.dump(); }

}  // namespace

TEST_CASE("cors: the default reflects any origin with credentials", "[integration][cors]") {
    ServerProcess s(small_stories_args({"--no-warmup"}));
    Client c("127.0.0.1", s.port());
    const auto r = c.post("/completion", completion_body(), origin("https://page.example"));
    CHECK(r.status == 200);
    CHECK(r.headers.value_or("Access-Control-Allow-Origin") == "https://page.example");
    CHECK(r.headers.value_or("Access-Control-Allow-Credentials") == "true");
    CHECK(r.headers.value_or("Vary").find("Origin") != std::string::npos);
    const auto pre = c.request("OPTIONS", "/completion", {}, preflight("https://page.example"));
    CHECK(pre.status == 204);
    CHECK(pre.headers.value_or("Access-Control-Allow-Origin") == "https://page.example");
    CHECK(pre.headers.value_or("Access-Control-Allow-Credentials") == "true");
    CHECK(pre.headers.value_or("Access-Control-Allow-Methods") == "GET, POST, DELETE, OPTIONS");
    CHECK(pre.headers.value_or("Access-Control-Allow-Headers") == "authorization, content-type");
}

TEST_CASE("cors: a list of origins allows those, refuses others, on requests and preflights",
          "[integration][cors]") {
    // The same settings from the command line and from llama-server's variables.
    for (const bool by_env : {false, true}) {
        INFO((by_env ? "LLAMA_ARG_CORS_*" : "--cors-*"));
        const std::vector<std::string> env =
            by_env ? std::vector<std::string>{"LLAMA_ARG_CORS_ORIGINS=https://app.example, http://localhost:5173",
                                              "LLAMA_ARG_CORS_METHODS=GET,POST", "LLAMA_ARG_CORS_HEADERS=Authorization",
                                              "LLAMA_ARG_CORS_CREDENTIALS=0"}
                   : std::vector<std::string>{};
        const auto args =
            by_env ? small_stories_args({"--no-warmup", "--api-key", "k1"})
                   : small_stories_args({"--no-warmup", "--api-key", "k1", "--cors-origins",
                                         "https://app.example, http://localhost:5173", "--cors-methods", "GET,POST",
                                         "--cors-headers", "Authorization", "--no-cors-credentials"});
        ServerProcess s(args, std::chrono::seconds(60), ServerProcess::WaitFor::Ready, env);
        Client c("127.0.0.1", s.port());

        Headers allowed = origin("https://app.example");
        allowed.set("Authorization", "Bearer k1");
        const auto ok = c.post("/completion", completion_body(), allowed);
        CHECK(ok.status == 200);
        CHECK(ok.headers.value_or("Access-Control-Allow-Origin") == "https://app.example");
        CHECK_FALSE(ok.headers.contains("Access-Control-Allow-Credentials"));
        CHECK(ok.headers.value_or("Vary").find("Origin") != std::string::npos);

        // A refused origin is still answered (browsers enforce CORS), without the header that lets it read.
        Headers refused = origin("https://evil.example");
        refused.set("Authorization", "Bearer k1");
        const auto no = c.post("/completion", completion_body(), refused);
        CHECK(no.status == 200);
        CHECK_FALSE(no.headers.contains("Access-Control-Allow-Origin"));
        CHECK_FALSE(no.headers.contains("Access-Control-Allow-Credentials"));
        // Errors carry the same headers (a 401 the page can read).
        const auto unauthorized = c.get("/props", origin("http://localhost:5173"));
        CHECK(unauthorized.status == 401);
        CHECK(unauthorized.headers.value_or("Access-Control-Allow-Origin") == "http://localhost:5173");

        // Preflights are answered before the API key is checked.
        const auto pre = c.request("OPTIONS", "/completion", {}, preflight("http://localhost:5173"));
        CHECK(pre.status == 204);
        CHECK(pre.headers.value_or("Access-Control-Allow-Origin") == "http://localhost:5173");
        CHECK(pre.headers.value_or("Access-Control-Allow-Credentials") == "false");
        CHECK(pre.headers.value_or("Access-Control-Allow-Methods") == "GET, POST");
        CHECK(pre.headers.value_or("Access-Control-Allow-Headers") == "Authorization");
        const auto pre_no = c.request("OPTIONS", "/completion", {}, preflight("https://app.example.evil"));
        CHECK(pre_no.status == 204);
        CHECK_FALSE(pre_no.headers.contains("Access-Control-Allow-Origin"));
    }
}

TEST_CASE("cors: any origin without credentials is a plain star", "[integration][cors]") {
    ServerProcess s(small_stories_args({"--no-warmup"}), std::chrono::seconds(60), ServerProcess::WaitFor::Ready,
                    {"LLAMA_ARG_CORS_CREDENTIALS=false"});
    Client c("127.0.0.1", s.port());
    const auto r = c.get("/health", origin("https://page.example"));
    CHECK(r.headers.value_or("Access-Control-Allow-Origin") == "*");
    CHECK_FALSE(r.headers.contains("Access-Control-Allow-Credentials"));
    const auto pre = c.request("OPTIONS", "/completion", {}, preflight("https://page.example"));
    CHECK(pre.headers.value_or("Access-Control-Allow-Origin") == "*");
    CHECK(pre.headers.value_or("Access-Control-Allow-Credentials") == "false");
}

TEST_CASE("cors: --tools makes localhost the default, an explicit --cors-origins wins", "[integration][cors]") {
    {
        ServerProcess s(small_stories_args({"--no-warmup", "--tools", "get_info"}));
        CHECK(s.wait_log("using localhost as default CORS origin"));
        Client c("127.0.0.1", s.port());
        CHECK(c.get("/health", origin("http://127.0.0.1:3000")).headers.value_or("Access-Control-Allow-Origin") ==
              "http://127.0.0.1:3000");
        CHECK(c.get("/health", origin("http://[::1]:3000")).headers.value_or("Access-Control-Allow-Origin") ==
              "http://[::1]:3000");
        CHECK_FALSE(c.get("/health", origin("http://localhost.evil.example")).headers.contains(
            "Access-Control-Allow-Origin"));
        CHECK_FALSE(c.request("OPTIONS", "/tools", {}, preflight("https://evil.example"))
                        .headers.contains("Access-Control-Allow-Origin"));
    }
    {
        // MCP servers too (the list may be empty: no server started, the default changes all the same).
        ServerProcess s(small_stories_args({"--no-warmup", "--mcp-servers-json", R"({"mcpServers": {}})"}));
        Client c("127.0.0.1", s.port());
        CHECK_FALSE(c.get("/health", origin("https://page.example")).headers.contains("Access-Control-Allow-Origin"));
    }
    {
        ServerProcess s(small_stories_args({"--no-warmup", "--tools", "get_info", "--cors-origins", "*"}));
        Client c("127.0.0.1", s.port());
        CHECK(c.get("/health", origin("https://page.example")).headers.value_or("Access-Control-Allow-Origin") ==
              "https://page.example");
    }
}

TEST_CASE("cors: malformed values stop startup with exit code 2", "[integration][cors]") {
    const std::string m = "serve -m " + stories_model() + " ";
    struct Case {
        std::string args, message;
    };
    for (const Case& k : std::vector<Case>{
             {"--cors-origins https://a.example/", "--cors-origins: 'https://a.example/' is not an origin"},
             {"--cors-origins 'https://a.example,,https://b.example'", "empty item"},
             {"--cors-origins '*,https://a.example'", "cannot be part of a list"},
             {"--cors-methods 'GET POST'", "--cors-methods: 'GET POST' is not a valid method"},
             {"--cors-headers 'X-A;'", "--cors-headers: 'X-A;' is not a valid header"},
             {"--cors-headers ''", "--cors-headers must not be empty"},
         }) {
        INFO(k.args);
        const CliResult r = run_ggserve(m + k.args);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains(k.message));
    }
    // From the environment too.
    setenv("LLAMA_ARG_CORS_ORIGINS", "nope", 1);
    const CliResult r = run_ggserve(m);
    unsetenv("LLAMA_ARG_CORS_ORIGINS");
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Catch::Contains("'nope' is not an origin"));
    // `run` has no HTTP server: refused with the reason.
    const CliResult run = run_ggserve("run -m " + stories_model() + " --cors-origins '*' -p Hi");
    CHECK(run.code == 2);
    CHECK_THAT(run.output, Catch::Contains("CORS belongs to the server"));
}

TEST_CASE("cors: in router mode the router answers with the options", "[integration][cors][router]") {
    char tmpl[] = "/tmp/ggserve-cors-XXXXXX";
    REQUIRE(mkdtemp(tmpl));
    const fs::path dir = tmpl;
    fs::create_symlink(fs::absolute(stories_model()), dir / "stories.gguf");
    {
        ServerProcess r({"--models-dir", dir.string(), "-np", "1", "-c", "512", "-t", "1", "--no-warmup",
                         "--cors-origins", "https://app.example", "--cors-methods", "POST"});
        Client c("127.0.0.1", r.port());
        const std::string body = json{{"model", "stories"}, {"prompt", "Once"}, {"n_predict", 2}}.dump();
        const auto ok = c.post("/completion", body, origin("https://app.example"));
        CHECK(ok.status == 200);
        CHECK(ok.headers.value_or("Access-Control-Allow-Origin") == "https://app.example");
        CHECK(ok.headers.value_or("Access-Control-Allow-Credentials") == "true");
        const auto no = c.post("/completion", body, origin("https://evil.example"));
        CHECK(no.status == 200);
        CHECK_FALSE(no.headers.contains("Access-Control-Allow-Origin"));
        const auto pre = c.request("OPTIONS", "/completion", {}, preflight("https://app.example"));
        CHECK(pre.status == 204);
        CHECK(pre.headers.value_or("Access-Control-Allow-Methods") == "POST");
        CHECK(pre.headers.value_or("Access-Control-Allow-Origin") == "https://app.example");
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
}
