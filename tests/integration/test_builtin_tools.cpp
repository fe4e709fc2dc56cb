// llama-server's built-in agent tools (--tools, -ag, LLAMA_ARG_TOOLS): GET/POST /tools on the real
// binary, their errors, the routes' absence without tools, and the server staying responsive while a
// tool call blocks.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_process.h"
#include "context_util.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;
using server::http::Headers;

namespace {

using ctxtest::TempDir;

std::vector<std::string> tool_names(Client& c) {
    const auto r = c.get("/tools");
    REQUIRE(r.status == 200);
    std::vector<std::string> names;
    for (const auto& t : r.json()) names.push_back(t["tool"]);
    return names;
}

const std::vector<std::string> kAll = {"read_file",  "file_glob_search", "grep_search", "exec_shell_command",
                                       "write_file", "edit_file",        "get_datetime", "get_info"};

}  // namespace

TEST_CASE("built-in tools: --tools all lists every tool and runs calls over HTTP", "[integration][builtin-tools]") {
    TempDir d;
    ServerProcess s(small_stories_args({"--tools", "all"}));
    CHECK(s.wait_log("built-in tools are enabled"));
    Client c("127.0.0.1", s.port());
    const json list = c.get("/tools").json();
    REQUIRE(list.size() == kAll.size());
    CHECK(tool_names(c) == kAll);
    for (const auto& t : list) {
        CHECK(t["definition"]["type"] == "function");
        CHECK(t["definition"]["function"]["name"] == t["tool"]);
        CHECK(t["permissions"]["write"].is_boolean());
        CHECK(t["type"] == "builtin");
    }
    CHECK(c.get("/props").json()["server"]["tools"] == json(kAll));

    const Headers in_dir{{"x-tool-cwd", d.path.string()}};
    auto call = [&](const json& body, const Headers& h) { return c.post("/tools", body.dump(), h); };
    auto r = call({{"tool", "write_file"}, {"params", {{"path", "sub/a.txt"}, {"content", "hello\nworld\n"}}}}, in_dir);
    REQUIRE(r.status == 200);
    CHECK(r.json()["result"] == "file written successfully");
    CHECK(std::filesystem::exists(d.path / "sub/a.txt"));
    r = call({{"tool", "read_file"}, {"params", {{"path", "sub/a.txt"}, {"start_line", 2}}}}, in_dir);
    CHECK(r.json()["plain_text_response"] == "world\n");
    r = call({{"tool", "read_file"}, {"params", {{"path", (d.path / "sub/a.txt").string()}}}}, {{"x-resp-type", "base64"}});
    CHECK(r.json()["base64"] == "aGVsbG8Kd29ybGQK");
    r = call({{"tool", "edit_file"}, {"params", {{"path", "sub/a.txt"}, {"edits", {{{"old_text", "world"}, {"new_text", "there"}}}}}}},
             in_dir);
    CHECK(r.json()["edits_applied"] == 1);
    r = call({{"tool", "grep_search"}, {"params", {{"path", "."}, {"pattern", "ther"}}}}, in_dir);
    CHECK(r.json()["plain_text_response"] == "sub/a.txt:there\n\n---\nTotal matches: 1\n");
    r = call({{"tool", "file_glob_search"}, {"params", {{"path", "."}, {"include", "*.txt"}}}}, in_dir);
    CHECK(r.json()["entries"] == json::array({{{"path", "sub/a.txt"}, {"type", "file"}}}));
    r = call({{"tool", "exec_shell_command"}, {"params", {{"command", "cat sub/a.txt; exit 4"}}}}, in_dir);
    CHECK(r.json()["plain_text_response"] == "hello\nthere\n\n[exit code: 4]");
    r = call({{"tool", "get_info"}}, in_dir);  // params may be left out
    CHECK(r.json()["cwd"] == d.path.string());
    // A tool's own failure is its result, as in llama-server.
    r = call({{"tool", "read_file"}, {"params", {{"path", "missing"}}}}, in_dir);
    CHECK(r.status == 200);
    CHECK(r.json()["error"] == "cannot stat file: missing");
}

TEST_CASE("built-in tools: bad requests, unknown tools and unsupported features are errors", "[integration][builtin-tools]") {
    ServerProcess s(small_stories_args({"--tools", "read_file,exec_shell_command"}));
    Client c("127.0.0.1", s.port());
    auto check = [&](const std::string& body, int status, const std::string& words, const Headers& h = {}) {
        INFO(body);
        const auto r = c.post("/tools", body, h);
        CHECK(r.status == status);
        const json e = r.json()["error"];
        CHECK(e["code"] == status);
        CHECK(e["message"].get<std::string>().find(words) != std::string::npos);
    };
    check("{not json", 400, "invalid JSON");
    check("[1]", 400, "JSON object");
    check("{}", 400, "'tool' is required");
    check(R"({"tool": 7})", 400, "'tool' is required");
    check(R"({"tool": "read_file", "params": [1]})", 400, "'params' must be an object");
    check(R"({"tool": "read_file", "params": {}})", 400, "missing required parameter 'path'");
    check(R"({"tool": "read_file", "params": {"path": "x", "end_line": "3"}})", 400, "'end_line' must be an integer");
    check(R"({"tool": "write_file", "params": {"path": "x", "content": "y"}})", 404, "unknown tool \"write_file\"");
    check(R"({"tool": "no_such_tool"})", 404, "unknown tool \"no_such_tool\"");
    check(R"({"tool": "read_file", "params": {"path": "x"}, "stream": true})", 400, "does not support stream");
    check(R"({"tool": "read_file", "params": {"path": "x"}})", 400, "x-tool-runtime", {{"x-tool-runtime", "docker-container:-a"}});
    check(std::string(300, '[') + std::string(300, ']'), 400, "nested deeper");
    CHECK(tool_names(c) == std::vector<std::string>{"read_file", "exec_shell_command"});
}

TEST_CASE("built-in tools: -ag, LLAMA_ARG_TOOLS, LLAMA_ARG_AGENT and -no-ag choose the tools", "[integration][builtin-tools]") {
    {
        ServerProcess s(small_stories_args({"-ag"}));
        Client c("127.0.0.1", s.port());
        CHECK(tool_names(c) == kAll);
        // -ag turns on the MCP CORS proxy too: a request without a target is a 400, not the 403 of "off".
        CHECK(c.get("/cors-proxy").status == 400);
        CHECK(c.get("/props").json()["cors_proxy_enabled"] == true);
    }
    {
        ServerProcess s(small_stories_args({}), std::chrono::seconds(60), ServerProcess::WaitFor::Ready,
                        {"LLAMA_ARG_TOOLS=get_info,grep_search"});
        Client c("127.0.0.1", s.port());
        CHECK(tool_names(c) == std::vector<std::string>{"grep_search", "get_info"});
    }
    {
        // The command line wins over the environment.
        ServerProcess s(small_stories_args({"--tools", "read_file"}), std::chrono::seconds(60),
                        ServerProcess::WaitFor::Ready, {"LLAMA_ARG_AGENT=1"});
        Client c("127.0.0.1", s.port());
        CHECK(tool_names(c) == std::vector<std::string>{"read_file"});
    }
    {
        // On the command line, the last of --tools / -ag / -no-ag wins.
        ServerProcess s(small_stories_args({"-ag", "-no-ag", "--tools", "get_info"}));
        Client c("127.0.0.1", s.port());
        CHECK(tool_names(c) == std::vector<std::string>{"get_info"});
    }
    {
        ServerProcess s(small_stories_args({"--tools", "all", "--no-agent"}));
        Client c("127.0.0.1", s.port());
        CHECK(c.get("/tools").status == 404);
    }
}

TEST_CASE("built-in tools: without --tools /tools is an unknown route, and unknown names stop the start",
          "[integration][builtin-tools]") {
    {
        ServerProcess s(small_stories_args({}));
        Client c("127.0.0.1", s.port());
        // GET of an unknown path goes to the web UI's files (a 404 there), POST is a routing 404.
        CHECK(c.get("/tools").status == 404);
        CHECK(c.get("/tools").status == c.get("/no-such-route").status);
        const auto r = c.post("/tools", R"({"tool":"get_info"})");
        CHECK(r.status == 404);
        CHECK(r.json()["error"]["code"] == 404);
        CHECK(s.log().find("built-in tools") == std::string::npos);
    }
    CliResult r = run_ggserve("serve --port 0 -m " + stories_model() + " --tools read_file,rm_everything");
    CHECK(r.code == 2);
    CHECK(r.output.find("unknown tool \"rm_everything\"") != std::string::npos);
    CHECK(r.output.find("available tools: read_file, file_glob_search") != std::string::npos);
    r = run_ggserve("serve --port 0 -m " + stories_model() + " --tools get_info --tools-runtime docker-container:-v");
    CHECK(r.code == 2);
    CHECK(r.output.find("--tools-runtime: invalid container id") != std::string::npos);
    r = run_ggserve("run -m " + stories_model() + " --tools all -p hi");
    CHECK(r.code == 2);
    CHECK(r.output.find("ggserve serve --tools") != std::string::npos);
}

TEST_CASE("built-in tools: the API key applies to /tools", "[integration][builtin-tools]") {
    ServerProcess s(small_stories_args({"--tools", "get_info", "--api-key", "sekrit"}));
    Client c("127.0.0.1", s.port());
    CHECK(c.get("/tools").status == 401);
    CHECK(c.post("/tools", R"({"tool":"get_info"})").status == 401);
    CHECK(c.get("/tools", {{"Authorization", "Bearer sekrit"}}).status == 200);
    CHECK(c.post("/tools", R"({"tool":"get_info"})", {{"Authorization", "Bearer sekrit"}}).status == 200);
}

TEST_CASE("built-in tools: /health answers while a tool call blocks", "[integration][builtin-tools]") {
    TempDir d;
    const std::string fifo = (d.path / "gate").string();
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    // One HTTP I/O thread: a call run on it would hold /health back.
    ServerProcess s(small_stories_args({"--tools", "exec_shell_command", "--threads-http", "1"}));
    const uint16_t port = s.port();
    // The call blocks reading the FIFO until this test writes to it.
    std::string body;
    int status = 0;
    std::thread caller([&] {
        Client c("127.0.0.1", port);
        const auto r = c.post("/tools", json{{"tool", "exec_shell_command"},
                                             {"params", {{"command", "cat " + fifo}, {"timeout", 60}}}}
                                            .dump());
        status = r.status;
        body = r.body;
    });
    // The open returns once the command has opened the FIFO for reading: the call runs.
    const int w = ctxtest::open_fifo_writer(fifo, caller, "the tool call");
    {
        Client c("127.0.0.1", port);
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 5; ++i) CHECK(c.get("/health").status == 200);
        CHECK(c.get("/tools").status == 200);
        CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    }
    CHECK(write(w, "released\n", 9) == 9);
    close(w);
    caller.join();
    CHECK(status == 200);
    CHECK(json::parse(body)["plain_text_response"] == "released\n\n[exit code: 0]");
}
