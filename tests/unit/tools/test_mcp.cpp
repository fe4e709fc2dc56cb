// The MCP client (--mcp-servers-*) against tests/fixtures/fake_mcp_server.py: the config format, the
// handshake, calls and their result shapes, concurrent calls matched by id, timeouts, garbage, over-long
// lines, crashes and restarts, startup failures, shutdown killing the process groups.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <future>
#include <thread>

#include "server/tools/mcp_servers.h"
#include "server/tools/toolbox.h"
#include "tools_util.h"

using json = nlohmann::json;
using tools::McpServerConfig;
using tools::McpServers;

namespace {

McpServerConfig fake(const std::string& name, const std::string& mode = "normal", int timeout_ms = 10000) {
    McpServerConfig c;
    c.name = name;
    c.command = "python3";
    c.args = {std::string(GGSERVE_SOURCE_DIR) + "/tests/fixtures/fake_mcp_server.py", "--mode", mode};
    c.timeout_ms = timeout_ms;
    return c;
}

std::vector<std::string> names_of(const std::vector<tools::McpToolDef>& defs) {
    std::vector<std::string> out;
    for (const auto& d : defs) out.push_back(d.server + "_" + d.name);
    return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// A FIFO that a `slow` tool call blocks on: opened() returns once the MCP server has opened it for
// reading (the call is running), release() lets the call answer.
struct Gate {
    TempDir dir;
    std::string path = (dir.path / "gate").string();
    int w = -1;
    Gate() {
        if (mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
    }
    ~Gate() {
        if (w >= 0) close(w);
    }
    bool opened(std::chrono::seconds timeout = std::chrono::seconds(20)) {
        auto f = std::async(std::launch::async, [p = path] { return open(p.c_str(), O_WRONLY | O_CLOEXEC); });
        if (f.wait_for(timeout) != std::future_status::ready) {
            const int unblock = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
            const int fd = f.get();
            if (fd >= 0) close(fd);
            close(unblock);
            return false;
        }
        w = f.get();
        return w >= 0;
    }
    void release(const std::string& line) {
        const std::string s = line + "\n";
        if (w >= 0 && write(w, s.data(), s.size()) != (ssize_t)s.size()) throw std::runtime_error("write failed");
        if (w >= 0) close(w);
        w = -1;
    }
};

bool no_children_left() {
    int status;
    return waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
}

std::string error_of(const json& r) { return r.contains("error") ? r["error"].get<std::string>() : ""; }

}  // namespace

TEST_CASE("mcp config: the mcpServers format, what is skipped with a warning and what is refused", "[tools][mcp]") {
    std::vector<std::string> warnings;
    auto list = tools::parse_mcp_config(R"({"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "server-fs"], "env": {"A": "1"}, "cwd": "/tmp", "timeout_ms": 500},
        "nocmd": {"args": ["x"]}}})",
                                        "test", warnings);
    REQUIRE(list.size() == 1);
    CHECK(list[0].name == "fs");
    CHECK(list[0].command == "npx");
    CHECK(list[0].args == std::vector<std::string>{"-y", "server-fs"});
    CHECK(list[0].env.at("A") == "1");
    CHECK(list[0].cwd == "/tmp");
    CHECK(list[0].timeout_ms == 500);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("\"nocmd\" has no command") != std::string::npos);

    warnings.clear();
    CHECK(tools::parse_mcp_config(R"({"servers": {}})", "test", warnings).empty());
    CHECK(warnings.at(0).find("no \"mcpServers\"") != std::string::npos);
    CHECK(tools::parse_mcp_config(R"({"mcpServers": {"a": {"command": "x"}}})", "t", warnings).at(0).timeout_ms == 30000);

    auto refused = [&](const std::string& text, const std::string& words) {
        INFO(text);
        try {
            tools::parse_mcp_config(text, "src", warnings);
            FAIL("accepted");
        } catch (const std::runtime_error& e) {
            CHECK(std::string(e.what()).find(words) != std::string::npos);
        }
    };
    refused("{not json", "src: not valid JSON");
    refused(R"({"mcpServers": {"a": {"command": 5}}})", "\"a\": \"command\" must be a string");
    refused(R"({"mcpServers": {"a": {"command": "x", "args": [1]}}})", "\"args\" must be an array of strings");
    refused(R"({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}})", "\"env\" must be an object of strings");
    refused(R"({"mcpServers": {"a": {"command": "x", "timeout_ms": -1}}})", "\"timeout_ms\" must be a positive");
    refused(R"({"mcpServers": {"a": 3}})", "must be an object");

    TempDir d;
    d.write("mcp.json", R"({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}})");
    warnings.clear();
    list = tools::load_mcp_configs((d.path / "mcp.json").string(), R"({"mcpServers": {"b": {"command": "z"}, "c": {"command": "w"}}})",
                                   warnings);
    REQUIRE(list.size() == 3);
    CHECK(list[1].command == "y");  // the file's "b" wins, the inline one is skipped
    CHECK(list[2].name == "c");
    CHECK(warnings.at(0).find("\"b\" is listed twice") != std::string::npos);
    CHECK_THROWS_WITH(tools::load_mcp_configs((d.path / "missing.json").string(), "", warnings),
                      Catch::Contains("cannot read"));
}

TEST_CASE("mcp result shapes: text parts joined, isError as error", "[tools][mcp]") {
    CHECK(tools::mcp_result_to_response({{"content", {{{"type", "text"}, {"text", "a"}}, {{"type", "image"}, {"data", "x"}},
                                                      {{"type", "text"}, {"text", "b"}}}}}) ==
          json{{"plain_text_response", "a\nb"}});
    CHECK(tools::mcp_result_to_response({{"content", json::array()}}) == json{{"plain_text_response", ""}});
    CHECK(tools::mcp_result_to_response({{"content", {{{"type", "text"}, {"text", "no"}}}}, {"isError", true}}) ==
          json{{"error", "no"}});
    CHECK(tools::mcp_result_to_response({{"isError", true}}) == json{{"error", "MCP tool returned an error"}});
}

TEST_CASE("mcp client: handshake, tools/list, calls and their results", "[tools][mcp]") {
    auto servers = std::make_shared<McpServers>(std::vector<McpServerConfig>{fake("fake")});
    servers->start();
    const auto names = names_of(servers->tools());
    CHECK(has(names, "fake_echo"));
    CHECK(has(names, "fake_slow"));
    CHECK(servers->call("fake", "echo", {{"text", "hello"}}) == json{{"plain_text_response", "hello"}});
    CHECK(servers->call("fake", "add", {{"a", 2}, {"b", 3}}) == json{{"plain_text_response", "5"}});
    CHECK(servers->call("fake", "fail", json::object()) == json{{"error", "it failed on purpose"}});
    CHECK(servers->call("fake", "rpc_error", json::object()) == json{{"error", "bad arguments"}});
    CHECK(servers->call("fake", "nope", json::object()) == json{{"error", "unknown tool nope"}});
    CHECK(error_of(servers->call("other", "echo", json::object())) == "MCP server unavailable: other");

    // The /tools rows: SERVER_TOOL, type mcp, the server's own schema; a taken name is skipped.
    const auto rows = tools::mcp_tool_rows(servers, {"fake_add"});
    const tools::Tool* echo = nullptr;
    for (const auto& r : rows) {
        CHECK(r.name != "fake_add");
        if (r.name == "fake_echo") echo = &r;
    }
    REQUIRE(echo);
    const json j = echo->to_json();
    CHECK(j["type"] == "mcp");
    CHECK(j["display_name"] == "fake_echo");
    CHECK(j["permissions"]["write"] == false);
    CHECK(j["definition"]["function"]["name"] == "fake_echo");
    CHECK(j["definition"]["function"]["description"] == "Echoes its text");
    CHECK(j["definition"]["function"]["parameters"]["required"] == json::array({"text"}));
    CHECK(echo->invoke({{"text", "via row"}}, {}) == json{{"plain_text_response", "via row"}});
}

TEST_CASE("mcp client: concurrent calls to one server are matched by id", "[tools][mcp]") {
    auto servers = std::make_shared<McpServers>(std::vector<McpServerConfig>{fake("fake")});
    servers->start();
    Gate gate;
    json slow;
    std::thread t([&] { slow = servers->call("fake", "slow", {{"fifo", gate.path}}); });
    const bool running = gate.opened();
    // The slow call holds its request open; later requests are answered first.
    json quick[3];
    if (running)
        for (int i = 0; i < 3; ++i) quick[i] = servers->call("fake", "echo", {{"text", "q" + std::to_string(i)}});
    gate.release("go");
    t.join();
    REQUIRE(running);
    for (int i = 0; i < 3; ++i) CHECK(quick[i] == json{{"plain_text_response", "q" + std::to_string(i)}});
    CHECK(slow == json{{"plain_text_response", "released: go"}});
}

TEST_CASE("mcp client: a call past its timeout is an error, its late reply is dropped", "[tools][mcp]") {
    auto servers = std::make_shared<McpServers>(std::vector<McpServerConfig>{fake("fake", "normal", 1000)});
    servers->start();
    Gate gate;
    const auto t0 = std::chrono::steady_clock::now();
    const json r = servers->call("fake", "slow", {{"fifo", gate.path}});
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    CHECK(r == json{{"error", "request timed out after 1000 ms"}});
    // Let the server answer the abandoned request now: the reply has no waiter and is dropped, and the
    // next call gets its own answer.
    REQUIRE(gate.opened());
    gate.release("late");
    CHECK(servers->call("fake", "echo", {{"text", "next"}}) == json{{"plain_text_response", "next"}});
    CHECK(servers->call("fake", "echo", {{"text", "next2"}}) == json{{"plain_text_response", "next2"}});
}

TEST_CASE("mcp client: junk lines, unknown ids, notifications, pings and over-long lines are skipped",
          "[tools][mcp]") {
    tools::McpLimits limits;
    limits.max_line = 64 * 1024;
    auto servers = std::make_shared<McpServers>(std::vector<McpServerConfig>{fake("fake")}, limits);
    servers->start();
    CHECK(servers->call("fake", "noise", json::object()) == json{{"plain_text_response", "after noise"}});
    CHECK(servers->call("fake", "huge", {{"bytes", 300000}}) == json{{"plain_text_response", "after huge"}});
    CHECK(servers->call("fake", "echo", {{"text", "still fine"}}) == json{{"plain_text_response", "still fine"}});
    REQUIRE(servers->client("fake"));
    CHECK(servers->client("fake")->alive());
}

TEST_CASE("mcp servers: a crash is an error for its call, the next call starts the server again", "[tools][mcp]") {
    auto servers = std::make_shared<McpServers>(std::vector<McpServerConfig>{fake("fake")});
    servers->start();
    const std::string pid1 = servers->call("fake", "pid", json::object())["plain_text_response"];
    const json crash = servers->call("fake", "crash", json::object());
    CHECK(error_of(crash).find("transport closed") != std::string::npos);
    CHECK(error_of(crash).find("exit") != std::string::npos);
    const std::string pid2 = servers->call("fake", "pid", json::object())["plain_text_response"];
    CHECK(pid2 != pid1);
    // The dead one was reaped when its replacement started.
    CHECK(kill((pid_t)std::stol(pid1), 0) == -1);
    CHECK(servers->call("fake", "echo", {{"text", "back"}}) == json{{"plain_text_response", "back"}});
}

TEST_CASE("mcp servers: servers that fail at startup lose their tools, calls to them fail fast", "[tools][mcp]") {
    tools::McpLimits limits;
    // Python starts slowly on a loaded machine (3 s was missed under a parallel build); the silent server
    // holds start() for the whole warm-up.
    limits.warmup = std::chrono::milliseconds(8000);
    limits.cooldown = std::chrono::seconds(600);
    McpServerConfig missing;
    missing.name = "missing";
    missing.command = "/no/such/mcp-server";
    auto servers = std::make_shared<McpServers>(
        std::vector<McpServerConfig>{fake("good"), fake("silent", "no-init", 300), fake("junk", "garbage", 300),
                                     fake("gone", "exit", 300), fake("refuses", "rpc-error", 5000), missing},
        limits);
    const auto t0 = std::chrono::steady_clock::now();
    servers->start();
    // bounded by one warm-up, the servers started in parallel (one after another: two warm-ups and more)
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(14));
    for (const auto& n : names_of(servers->tools())) CHECK(n.rfind("good_", 0) == 0);
    CHECK(has(names_of(servers->tools()), "good_echo"));
    // A call to one of them tries to start it (bounded by its timeout), then it is unavailable for the
    // cooldown.
    const std::string first = error_of(servers->call("silent", "echo", json::object()));
    CHECK(first.find("MCP server unavailable: silent: initialize failed: request timed out") == 0);
    CHECK(error_of(servers->call("silent", "echo", json::object())) == "MCP server unavailable: silent");
    CHECK(error_of(servers->call("refuses", "echo", json::object())).find("initialize failed: cannot start") !=
          std::string::npos);
    CHECK(error_of(servers->call("missing", "echo", json::object())).find("cannot run '/no/such/mcp-server'") !=
          std::string::npos);
    CHECK(servers->call("good", "echo", {{"text", "ok"}}) == json{{"plain_text_response", "ok"}});
}

TEST_CASE("mcp servers: shutdown ends a blocked call and kills every process group, nothing left", "[tools][mcp]") {
    REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    auto servers = std::make_shared<McpServers>(std::vector<McpServerConfig>{fake("fake")});
    servers->start();
    // A grandchild (sleep 300) in the server's group, holding its pipes.
    const std::string grandchild = servers->call("fake", "grandchild", json::object())["plain_text_response"];
    Gate gate;
    json blocked;
    std::thread t([&] { blocked = servers->call("fake", "slow", {{"fifo", gate.path}}); });
    const bool running = gate.opened();
    const auto t0 = std::chrono::steady_clock::now();
    servers->shutdown();  // as the server's shutdown does: waits end at once
    t.join();
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    REQUIRE(running);
    CHECK(blocked.contains("error"));
    servers.reset();  // the group is killed, the child reaped
    // This process is the orphaned sleep's subreaper: waiting for it ends once the group's SIGKILL has
    // reached it (a survivor would sleep 300 s).
    int status = 0;
    REQUIRE(waitpid((pid_t)std::stol(grandchild), &status, 0) > 0);
    CHECK(WIFSIGNALED(status));
    CHECK(no_children_left());
    prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST_CASE("mcp toolbox: MCP tools after the built-in ones, /tools served even when no server started",
          "[tools][mcp]") {
    tools::Toolbox tb({"get_info"});
    tb.set_mcp(std::make_shared<McpServers>(std::vector<McpServerConfig>{fake("fake")}));
    tb.start_mcp();
    const auto names = tb.names();
    REQUIRE(names.size() > 2);
    CHECK(names[0] == "get_info");
    CHECK(names[1] == "fake_echo");
    REQUIRE(tb.find("fake_echo"));
    CHECK(tb.find("fake_echo")->type == "mcp");
    CHECK_FALSE(tb.find("fake_echo")->check_schema);
    tools::Toolbox moved = std::move(tb);  // rows stay valid when the toolbox moves (into the API)
    CHECK(moved.find("fake_echo")->invoke({{"text", "x"}}, {}) == json{{"plain_text_response", "x"}});

    tools::Toolbox none({});
    tools::McpLimits limits;
    limits.warmup = std::chrono::milliseconds(300);
    none.set_mcp(std::make_shared<McpServers>(std::vector<McpServerConfig>{fake("gone", "exit")}, limits));
    none.start_mcp();
    CHECK(none.names().empty());
    CHECK_FALSE(none.empty());
}
