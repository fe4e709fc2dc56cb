// llama-server's MCP servers (--mcp-servers-config, --mcp-servers-json, LLAMA_ARG_MCP_SERVERS_*): the real
// binary starts tests/fixtures/fake_mcp_server.py and offers its tools at GET/POST /tools, beside the
// built-in ones; bad configurations, servers that fail, crash or block, and the children ending with the
// server.
#include <fcntl.h>
#include <signal.h>
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

namespace {

using ctxtest::TempDir;

json fake_entry(const std::string& mode = "normal", int timeout_ms = 0) {
    json e = {{"command", "python3"},
              {"args", {std::string(GGSERVE_SOURCE_DIR) + "/tests/fixtures/fake_mcp_server.py", "--mode", mode}}};
    if (timeout_ms > 0) e["timeout_ms"] = timeout_ms;
    return e;
}

std::string servers_json(const json& entries) { return json{{"mcpServers", entries}}.dump(); }

std::vector<std::string> tool_names(Client& c) {
    const auto r = c.get("/tools");
    REQUIRE(r.status == 200);
    const json list = r.json();
    std::vector<std::string> names;
    for (const auto& t : list) names.push_back(t["tool"]);
    return names;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

json call(Client& c, const std::string& tool, const json& params = json::object()) {
    const auto r = c.post("/tools", json{{"tool", tool}, {"params", params}}.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    return r.json();
}

// Gone, or a zombie waiting for init: either way no longer running. Polled until `timeout`: the process
// was killed by another process, whose SIGKILL takes effect asynchronously.
bool process_ended(pid_t pid, std::chrono::seconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
        std::string stat;
        std::getline(f, stat);
        const auto close = stat.rfind(')');
        if (!f || close == std::string::npos || stat.substr(close + 2, 1) == "Z") return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace

TEST_CASE("MCP servers: --mcp-servers-json tools in GET/POST /tools beside --tools", "[integration][mcp]") {
    ServerProcess s(small_stories_args(
        {"--tools", "get_info", "--mcp-servers-json", servers_json({{"fake", fake_entry()}})}));
    CHECK(s.wait_log("MCP servers are enabled (fake"));
    Client c("127.0.0.1", s.port());
    const auto names = tool_names(c);
    REQUIRE(names.size() > 2);
    CHECK(names[0] == "get_info");
    CHECK(names[1] == "fake_echo");
    const json list = c.get("/tools").json();
    for (const auto& t : list) {
        if (t["tool"] != "fake_echo") continue;
        CHECK(t["type"] == "mcp");
        CHECK(t["display_name"] == "fake_echo");
        CHECK(t["permissions"]["write"] == false);
        CHECK(t["definition"]["function"]["name"] == "fake_echo");
        CHECK(t["definition"]["function"]["parameters"]["properties"].contains("text"));
    }
    CHECK(has(c.get("/props").json()["server"]["tools"], "fake_add"));

    CHECK(call(c, "fake_echo", {{"text", "hi there"}}) == json{{"plain_text_response", "hi there"}});
    CHECK(call(c, "fake_add", {{"a", 40}, {"b", 2}}) == json{{"plain_text_response", "42"}});
    // A tool's failure and a JSON-RPC error are results with status 200, as llama-server answers them.
    CHECK(call(c, "fake_fail") == json{{"error", "it failed on purpose"}});
    CHECK(call(c, "fake_rpc_error") == json{{"error", "bad arguments"}});
    // The MCP server checks its own arguments: /tools passes them on unchecked.
    CHECK(call(c, "fake_echo") == json{{"plain_text_response", ""}});
    // Headers are not arguments.
    CHECK(c.post("/tools", json{{"tool", "fake_echo"}, {"params", {{"text", "x"}}}}.dump(), {{"x-tool-cwd", "/tmp"}})
              .json() == json{{"plain_text_response", "x"}});
    CHECK(c.post("/tools", R"({"tool": "fake_nope"})").status == 404);
    CHECK(c.post("/tools", R"({"tool": "fake_echo", "params": 3})").status == 400);
    // The children's stderr goes to the log.
    CHECK(call(c, "fake_stderr", {{"text", "note from the MCP server"}}) == json{{"plain_text_response", "logged"}});
    CHECK(s.wait_log("MCP server 'fake' stderr: note from the MCP server"));
}

TEST_CASE("MCP servers: --mcp-servers-config FILE and LLAMA_ARG_MCP_SERVERS_JSON, without --tools",
          "[integration][mcp]") {
    TempDir d;
    const auto file = d.path / "mcp.json";
    std::ofstream(file) << servers_json({{"files", fake_entry()}});
    {
        ServerProcess s(small_stories_args({"--mcp-servers-config", file.string()}));
        Client c("127.0.0.1", s.port());
        const auto names = tool_names(c);
        CHECK(has(names, "files_echo"));
        CHECK_FALSE(has(names, "get_info"));
        CHECK(c.post("/tools", R"({"tool": "get_info"})").status == 404);
        CHECK(call(c, "files_echo", {{"text", "from file"}}) == json{{"plain_text_response", "from file"}});
    }
    {
        ServerProcess s(small_stories_args({}), std::chrono::seconds(60), ServerProcess::WaitFor::Ready,
                        {"LLAMA_ARG_MCP_SERVERS_JSON=" + servers_json({{"env", fake_entry()}})});
        Client c("127.0.0.1", s.port());
        CHECK(call(c, "env_echo", {{"text", "from env"}}) == json{{"plain_text_response", "from env"}});
    }
}

TEST_CASE("MCP servers: a bad configuration stops the start, failing servers only lose their tools",
          "[integration][mcp]") {
    const std::string base = "serve --port 0 -m " + stories_model() + " ";
    CliResult r = run_ggserve(base + "--mcp-servers-config /no/such/mcp.json");
    CHECK(r.code == 2);
    CHECK(r.output.find("--mcp-servers-config: cannot read '/no/such/mcp.json'") != std::string::npos);
    r = run_ggserve(base + "--mcp-servers-json '{not json'");
    CHECK(r.code == 2);
    CHECK(r.output.find("--mcp-servers-json: not valid JSON") != std::string::npos);
    r = run_ggserve(base + "--mcp-servers-json '{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": \"-v\"}}}'");
    CHECK(r.code == 2);
    CHECK(r.output.find("\"a\": \"args\" must be an array of strings") != std::string::npos);
    r = run_ggserve("run -m " + stories_model() + " --mcp-servers-json '{}' -p hi");
    CHECK(r.code == 2);
    CHECK(r.output.find("ggserve serve --mcp-servers-config") != std::string::npos);

    // Servers that cannot start, do not answer initialize or answer garbage: warnings, their tools missing.
    const json entries = {{"good", fake_entry()},
                          {"silent", fake_entry("no-init")},
                          {"junk", fake_entry("garbage")},
                          {"missing", {{"command", "/no/such/mcp-server"}}},
                          {"nocommand", {{"args", {"x"}}}}};
    const auto t0 = std::chrono::steady_clock::now();
    ServerProcess s(small_stories_args({"--mcp-servers-json", servers_json(entries)}));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(40));  // 10 s each at most, in parallel
    Client c("127.0.0.1", s.port());
    for (const auto& n : tool_names(c)) CHECK(n.rfind("good_", 0) == 0);
    CHECK(has(tool_names(c), "good_echo"));
    const std::string log = s.log();
    CHECK(log.find("MCP server \"nocommand\" has no command, skipped") != std::string::npos);
    CHECK(log.find("MCP server 'silent' did not start, its tools are missing: initialize failed: request timed out") !=
          std::string::npos);
    CHECK(log.find("MCP server 'junk' did not start") != std::string::npos);
    CHECK(log.find("MCP server 'missing' did not start, its tools are missing: cannot run '/no/such/mcp-server'") !=
          std::string::npos);

    // No servers at all (only entries without a command): no /tools, as without the option.
    ServerProcess none(small_stories_args({"--mcp-servers-json", servers_json({{"x", {{"args", {"y"}}}}})}));
    Client cn("127.0.0.1", none.port());
    CHECK(cn.get("/tools").status == 404);
}

TEST_CASE("MCP servers: /health answers while an MCP call blocks, a timeout and a crash are errors",
          "[integration][threads][mcp]") {
    TempDir d;
    const std::string fifo = (d.path / "gate").string();
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    ServerProcess s(small_stories_args({"--threads-http", "1", "--mcp-servers-json",
                                        servers_json({{"fake", fake_entry()}, {"quick", fake_entry("normal", 2000)}})}));
    const uint16_t port = s.port();
    std::string body;
    int status = 0;
    std::thread caller([&] {
        Client c("127.0.0.1", port);
        const auto r = c.post("/tools", json{{"tool", "fake_slow"}, {"params", {{"fifo", fifo}}}}.dump());
        status = r.status;
        body = r.body;
    });
    // The open returns once the command has opened the FIFO for reading: the call runs.
    const int w = ctxtest::open_fifo_writer(fifo, caller, "the MCP call");
    {
        Client c("127.0.0.1", port);
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 5; ++i) CHECK(c.get("/health").status == 200);
        CHECK(c.get("/tools").status == 200);
        // Another call to the same server is answered while the first one waits.
        CHECK(call(c, "fake_echo", {{"text", "meanwhile"}}) == json{{"plain_text_response", "meanwhile"}});
        CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    }
    CHECK(write(w, "go\n", 3) == 3);
    close(w);
    caller.join();
    CHECK(status == 200);
    CHECK(json::parse(body) == json{{"plain_text_response", "released: go"}});

    Client c("127.0.0.1", port);
    // timeout_ms 2000: a call that gets no answer is an error, and the server stays usable.
    TempDir d2;
    const std::string never = (d2.path / "never").string();
    REQUIRE(mkfifo(never.c_str(), 0600) == 0);
    CHECK(call(c, "quick_slow", {{"fifo", never}}) == json{{"error", "request timed out after 2000 ms"}});
    CHECK(call(c, "quick_echo", {{"text", "after"}}) == json{{"plain_text_response", "after"}});
    // A crash is its call's error; the next call starts the server again.
    const std::string pid1 = call(c, "fake_pid")["plain_text_response"];
    const json crashed = call(c, "fake_crash");
    CHECK(crashed["error"].get<std::string>().find("transport closed") != std::string::npos);
    const std::string pid2 = call(c, "fake_pid")["plain_text_response"];
    CHECK(pid1 != pid2);
    CHECK(process_ended((pid_t)std::stol(pid1)));
    CHECK(s.wait_log("MCP server 'fake' has died"));
    // Unblock the abandoned quick_slow call's reader so that the fixture's thread ends too.
    const int unblock = open(never.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (unblock >= 0) close(unblock);
}

TEST_CASE("MCP servers: the MCP servers and what they started end with the server", "[integration][mcp]") {
    ServerProcess s(small_stories_args({"--mcp-servers-json", servers_json({{"fake", fake_entry()}})}));
    Client c("127.0.0.1", s.port());
    const pid_t server = (pid_t)std::stol(call(c, "fake_pid")["plain_text_response"].get<std::string>());
    const pid_t sleeper = (pid_t)std::stol(call(c, "fake_grandchild")["plain_text_response"].get<std::string>());
    CHECK_FALSE(process_ended(server, std::chrono::seconds(0)));
    CHECK_FALSE(process_ended(sleeper, std::chrono::seconds(0)));
    CHECK(s.stop() == 0);
    CHECK(process_ended(server));
    CHECK(process_ended(sleeper));  // `sleep 300` in the MCP server's process group
}
