// Helpers of the context-management integration tests: greedy requests, the CLI, temp directories.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "server/http/client.h"
#include "server_process.h"

namespace ctxtest {

using json = nlohmann::json;

// A greedy /completion; extra fields are merged into the body.
inline json complete(uint16_t port, const json& prompt, int n, json extra = json::object()) {
    server::http::Client c("127.0.0.1", port);
    json body{{"prompt", prompt}, {"n_predict", n}, {"temperature", 0}, {"return_tokens", true}};
    body.update(extra);
    const auto r = c.post("/completion", body.dump());
    REQUIRE(r.status == 200);
    return r.json();
}

// A value of the server's /metrics (an unlabelled name).
inline double metric(uint16_t port, const std::string& name) {
    server::http::Client c("127.0.0.1", port);
    const std::string text = c.get("/metrics").body;
    const auto at = text.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + name.size() + 2));
}

// The events of a streamed request, parsed ([DONE] left out); the stream must answer 200 and end properly.
inline std::vector<json> stream_events(server::http::Client& c, const std::string& path, const json& body) {
    std::vector<json> out;
    const auto r = c.stream("POST", path, body.dump(), {}, [&](const server::http::SseEvent& e) {
        if (e.data != "[DONE]") out.push_back(json::parse(e.data));
        return true;
    });
    REQUIRE(r.status == 200);
    REQUIRE(r.complete);
    return out;
}

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "ggserve-ctx-XXXXXX").string();
        REQUIRE(mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;  // never throw from a destructor
        std::filesystem::remove_all(path, ec);
    }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

struct CliResult {
    int status = -1;
    std::string out, err;
};

inline std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Runs `ggserve ARGS`, capturing stdout and stderr. A command that has not ended after 120 s is killed
// (status 124), so a CLI that wrongly starts serving fails the test instead of hanging it.
// env: "NAME=VALUE" entries set for the command only.
inline CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    TempDir tmp;
    std::string cmd = "timeout 120 env";
    for (const auto& e : env) cmd += " " + shell_quote(e);
    cmd += " " + shell_quote(ggserve_binary());
    for (const auto& a : args) cmd += " " + shell_quote(a);
    cmd += " 2>" + shell_quote(tmp.file("err"));
    CliResult r;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::ifstream e(tmp.file("err"));
    r.err.assign(std::istreambuf_iterator<char>(e), {});
    return r;
}

// Opens the FIFO `fifo` for writing. The open returns once the process under test has opened it for
// reading, which is how a test knows that a call blocking on it is running (no sleeps). If that does
// not happen within 30 s the open is released, `caller` (the thread making the call) is joined and the
// test fails, naming `what`.
inline int open_fifo_writer(const std::string& fifo, std::thread& caller, const std::string& what) {
    auto opened = std::async(std::launch::async, [&] { return open(fifo.c_str(), O_WRONLY | O_CLOEXEC); });
    if (opened.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
        const int unblock = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // let the open return
        close(opened.get());
        close(unblock);
        caller.join();
        FAIL(what << " never opened the FIFO");
    }
    const int w = opened.get();
    REQUIRE(w >= 0);
    return w;
}

}  // namespace ctxtest
