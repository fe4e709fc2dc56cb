// --tools-runtime and x-tool-runtime (llama-server's isolates for the built-in tools), the get_datetime
// tool and streamed exec_shell_command, against the real server. The isolates are programs named docker
// and ssh put first in the server's PATH: they do what `docker run`/`docker exec` and `ssh` do for the
// server (start a "container" that lives while its stdin is open, run a command in it; run the one
// command string a remote shell gets), on this machine, and log how they were called. So the tests see
// every command the server sends and check that quoting, stdin, working directories, the container's
// life and the timeouts are right. scripts/test_docker.sh runs the same tools in a real container.
#include <signal.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "cli_process.h"
#include "context_util.h"
#include "server/http/client.h"
#include "server_process.h"

namespace {

using json = nlohmann::json;
using server::http::Client;
using server::http::Headers;
namespace fs = std::filesystem;

// `docker run --rm -i --cidfile F IMAGE CMD...` makes $FAKE_ROOT/ID (the container's directory, its
// working directory), records ID in $FAKE_ROOT/started, runs CMD there with the client's stdin and, when
// it ends, removes the directory and records ID in $FAKE_ROOT/stopped. `docker exec [-i] ID CMD...` runs
// CMD in that directory (stdin only with -i, as docker). Image "missing" fails as an unknown image does.
constexpr const char* kFakeDocker = R"(#!/bin/sh
printf '%s\n' "docker $*" >> "$FAKE_ROOT/calls"
case "$1" in
run)
    shift
    while [ $# -gt 0 ]; do
        case "$1" in
            --rm|-i) shift ;;
            --cidfile) cidfile=$2; shift 2 ;;
            *) break ;;
        esac
    done
    image=$1; shift
    if [ "$image" = missing ]; then echo "Unable to find image 'missing:latest' locally" >&2; exit 125; fi
    id=c$$x$(date +%N)
    mkdir -p "$FAKE_ROOT/$id"
    printf '%s' "$id" > "$cidfile"
    echo "$id" >> "$FAKE_ROOT/started"
    cd "$FAKE_ROOT/$id" || exit 1
    exec 3<&0  # a background command's stdin would be /dev/null
    "$@" 0<&3 3<&- &
    child=$!
    exec 3<&-
    echo "$child" > "$FAKE_ROOT/$id.pid"
    wait "$child"
    rc=$?
    rm -rf "$FAKE_ROOT/$id"
    echo "$id" >> "$FAKE_ROOT/stopped"
    exit $rc ;;
exec)
    shift
    stdin=0
    if [ "$1" = -i ]; then stdin=1; shift; fi
    id=$1; shift
    if [ ! -d "$FAKE_ROOT/$id" ]; then echo "Error response from daemon: No such container: $id" >&2; exit 1; fi
    cd "$FAKE_ROOT/$id" || exit 1
    if [ $stdin = 1 ]; then exec "$@"; else exec "$@" < /dev/null; fi ;;
esac
echo "fake docker: unknown command $1" >&2
exit 125
)";

// ssh [-o OPT]... [-n] TARGET COMMAND: runs the one COMMAND string as a remote shell would.
constexpr const char* kFakeSsh = R"(#!/bin/sh
printf '%s\n' "ssh $*" >> "$FAKE_ROOT/calls"
n=0
while [ $# -gt 0 ]; do
    case "$1" in
        -o) shift 2 ;;
        -n) n=1; shift ;;
        *) break ;;
    esac
done
target=$1; shift
if [ $# -ne 1 ]; then echo "fake ssh: expected one command string, got $#" >&2; exit 255; fi
echo "$target" >> "$FAKE_ROOT/targets"
cd "$FAKE_ROOT" || exit 255
if [ $n = 1 ]; then exec sh -c "$1" < /dev/null; else exec sh -c "$1"; fi
)";

struct FakeIsolates {
    ctxtest::TempDir dir;
    fs::path root, bin;
    FakeIsolates() : root(dir.path / "root"), bin(dir.path / "bin") {
        fs::create_directories(root);
        fs::create_directories(bin);
        for (auto [name, text] : {std::pair{"docker", kFakeDocker}, std::pair{"ssh", kFakeSsh}}) {
            std::ofstream(bin / name) << text;
            fs::permissions(bin / name, fs::perms::owner_all);
        }
    }
    std::vector<std::string> env() const {
        const char* path = std::getenv("PATH");
        return {"PATH=" + bin.string() + ":" + (path ? path : "/usr/bin:/bin"), "FAKE_ROOT=" + root.string()};
    }
    std::string file(const std::string& name) const {
        std::ifstream f(root / name);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }
    std::vector<std::string> lines(const std::string& name) const {
        std::vector<std::string> out;
        std::istringstream in(file(name));
        for (std::string l; std::getline(in, l);) out.push_back(l);
        return out;
    }
};

json call(Client& c, const json& body, const Headers& h = {}) {
    const auto r = c.post("/tools", body.dump(), h);
    INFO(r.body);
    REQUIRE(r.status == 200);
    return r.json();
}

void write_at(const fs::path& dir, const std::string& rel, const std::string& content) {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel, std::ios::binary) << content;
}

std::string read_at(const fs::path& dir, const std::string& rel) {
    std::ifstream f(dir / rel, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// A name a shell would split, expand or end a quote at.
const std::string kHostile = "it's a \"$HOME\" `x` ;|&.txt";

}  // namespace

TEST_CASE("tools runtime: --tools-runtime docker:IMAGE runs every tool in the container it starts and stops",
          "[integration][tools-runtime]") {
    FakeIsolates fake;
    ctxtest::TempDir work;
    std::string id;
    {
        ServerProcess s(small_stories_args({"--tools", "all", "--tools-runtime", "docker:debian:bookworm-slim"}),
                        std::chrono::seconds(60), ServerProcess::WaitFor::Ready, fake.env());
        Client c("127.0.0.1", s.port());
        REQUIRE(fake.lines("started").size() == 1);
        id = fake.lines("started")[0];
        CHECK(contains(fake.file("calls"), "docker run --rm -i --cidfile "));
        CHECK(contains(fake.file("calls"), " debian:bookworm-slim sh -c "));
        CHECK(s.wait_log("tools runtime: the tools run in docker container"));

        // No working directory: the container's own (relative paths land there).
        json r = call(c, {{"tool", "get_info"}});
        CHECK(r["cwd"] == (fake.root / id).string());
        r = call(c, {{"tool", "write_file"}, {"params", {{"path", "here.txt"}, {"content", "in the box\n"}}}});
        CHECK(r["result"] == "file written successfully");
        CHECK(fs::exists(fake.root / id / "here.txt"));
        CHECK_FALSE(fs::exists("here.txt"));

        // With x-tool-cwd: contents with every byte value, a name a shell would take apart.
        const Headers in_work{{"x-tool-cwd", work.path.string()}};
        std::string bytes;
        for (int i = 0; i < 256; ++i) bytes += (char)i;
        r = call(c, {{"tool", "write_file"}, {"params", {{"path", "sub/" + kHostile}, {"content", "line one\nline two\n"}}}},
                 in_work);
        CHECK(r["bytes"] == 18);
        CHECK(read_at(work.path, "sub/" + kHostile) == "line one\nline two\n");
        CHECK(contains(fake.file("calls"), "docker exec -i " + id + " sh -c"));  // the content on stdin
        r = call(c, {{"tool", "read_file"}, {"params", {{"path", "sub/" + kHostile}, {"start_line", 2}}}}, in_work);
        CHECK(r["plain_text_response"] == "line two\n");
        write_at(work.path, "bin.dat", bytes);
        r = call(c, {{"tool", "read_file"}, {"params", {{"path", "bin.dat"}}}},
                 {{"x-tool-cwd", work.path.string()}, {"x-resp-type", "base64"}});
        CHECK(r["size_bytes"] == 256);
        r = call(c, {{"tool", "edit_file"}, {"params", {{"path", "sub/" + kHostile}, {"edits", {{{"old_text", "two"}, {"new_text", "2"}}}}}}},
                 in_work);
        CHECK(r["edits_applied"] == 1);
        CHECK(read_at(work.path, "sub/" + kHostile) == "line one\nline 2\n");
        r = call(c, {{"tool", "grep_search"}, {"params", {{"path", "."}, {"pattern", "line 2"}, {"include", "*.txt"}}}}, in_work);
        CHECK(r["plain_text_response"] == "sub/" + kHostile + ":line 2\n\n---\nTotal matches: 1\n");
        // A directory of many files is read in a few commands (one per 64 files), not two per file.
        for (int i = 0; i < 150; ++i)
            write_at(work.path, "many/f" + std::to_string(i) + ".txt", i % 50 == 7 ? "a needle here\n" : "hay\n");
        write_at(work.path, "many/big.txt", std::string((16u << 20) + 1, 'n'));  // over grep's 16 MiB: skipped
        const size_t calls_before = fake.lines("calls").size();
        r = call(c, {{"tool", "grep_search"}, {"params", {{"path", "many"}, {"pattern", "needle"}}}}, in_work);
        CHECK(r["plain_text_response"] ==
              "f107.txt:a needle here\nf57.txt:a needle here\nf7.txt:a needle here\n\n---\nTotal matches: 3\n"
              "[1 files larger than 16 MiB not searched]\n");
        CHECK(fake.lines("calls").size() - calls_before <= 8);
        fs::remove_all(work.path / "many");
                write_at(work.path, "node_modules/skip.txt", "x");
        r = call(c, {{"tool", "file_glob_search"}, {"params", {{"path", "."}, {"type", "all"}}}}, in_work);
        CHECK(r["entries"] == json::array({{{"path", "bin.dat"}, {"type", "file"}},
                                           {{"path", "node_modules"}, {"type", "dir"}},
                                           {{"path", "sub"}, {"type", "dir"}},
                                           {{"path", "sub/" + kHostile}, {"type", "file"}}}));
        r = call(c, {{"tool", "file_glob_search"}, {"params", {{"path", "."}, {"max_depth", 1}}}}, in_work);
        CHECK(r["entries"] == json::array({{{"path", "bin.dat"}, {"type", "file"}}}));
        r = call(c, {{"tool", "exec_shell_command"}, {"params", {{"command", "pwd; echo err >&2; exit 3"}}}}, in_work);
        CHECK(r["plain_text_response"] == work.path.string() + "\nerr\n\n[exit code: 3]");
        r = call(c, {{"tool", "read_file"}, {"params", {{"path", "missing"}}}}, in_work);
        CHECK(r["error"] == "cannot stat file: missing");
        r = call(c, {{"tool", "read_file"}, {"params", {{"path", "sub"}}}}, in_work);  // a directory
        CHECK(r["error"] == "cannot stat file: sub");
        mkfifo((work.path / "fifo").c_str(), 0600);
        r = call(c, {{"tool", "write_file"}, {"params", {{"path", "fifo"}, {"content", "x"}}}}, in_work);
        CHECK(r["error"] == "failed to write file: fifo");  // never opened: it would block
        // The isolate's own `timeout` ends a command that runs too long, wherever it runs.
        r = call(c, {{"tool", "exec_shell_command"}, {"params", {{"command", "sleep 30"}, {"timeout", 1}}}});
        CHECK(contains(r["plain_text_response"], "[exit code: 124] [exit due to timed out]"));

        // A container that dies is started again at the next call.
        const std::string pid = fake.file(id + ".pid");
        REQUIRE(!pid.empty());
        kill(std::stoi(pid), SIGKILL);
        std::string now_in;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < deadline) {
            now_in = call(c, {{"tool", "get_info"}})["cwd"].get<std::string>();
            if (now_in != (fake.root / id).string() && now_in != "unknown") break;
        }
        REQUIRE(fake.lines("started").size() == 2);
        CHECK(now_in == (fake.root / fake.lines("started")[1]).string());
        CHECK(s.wait_log("starting a new one"));
        id = fake.lines("started")[1];
        CHECK(s.stop() == 0);
    }
    // The server closed the container's stdin on the way out: it stopped (and --rm removed it).
    const auto stopped = fake.lines("stopped");
    CHECK(std::find(stopped.begin(), stopped.end(), id) != stopped.end());
    CHECK_FALSE(fs::exists(fake.root / id));
}

TEST_CASE("tools runtime: ssh:TARGET runs the tools through one quoted command string, key authentication only",
          "[integration][tools-runtime]") {
    FakeIsolates fake;
    ctxtest::TempDir work;
    ServerProcess s(small_stories_args({"--tools", "read_file,write_file,exec_shell_command,grep_search",
                                        "--tools-runtime", "ssh:dev@build-01.example"}),
                    std::chrono::seconds(60), ServerProcess::WaitFor::Ready, fake.env());
    Client c("127.0.0.1", s.port());
    const Headers in_work{{"x-tool-cwd", work.path.string()}};
    json r = call(c, {{"tool", "write_file"}, {"params", {{"path", kHostile}, {"content", "'quoted' \"text\" $PATH\n"}}}},
                  in_work);
    CHECK(r["result"] == "file written successfully");
    CHECK(read_at(work.path, kHostile) == "'quoted' \"text\" $PATH\n");
    r = call(c, {{"tool", "read_file"}, {"params", {{"path", kHostile}}}}, in_work);
    CHECK(r["plain_text_response"] == "'quoted' \"text\" $PATH\n");
    r = call(c, {{"tool", "grep_search"}, {"params", {{"path", "."}, {"pattern", "$PATH"}, {"literal", true}}}}, in_work);
    CHECK(r["plain_text_response"] == kHostile + ":'quoted' \"text\" $PATH\n\n---\nTotal matches: 1\n");
    r = call(c, {{"tool", "exec_shell_command"}, {"params", {{"command", "printf '%s|' \"$0\" 'a b'; pwd"}}}}, in_work);
    CHECK(r["plain_text_response"] == "sh|a b|" + work.path.string() + "\n\n[exit code: 0]");
    for (const auto& t : fake.lines("targets")) CHECK(t == "dev@build-01.example");
    const std::string calls = fake.file("calls");
    CHECK(contains(calls, "ssh -o BatchMode=yes -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no "
                          "-o StrictHostKeyChecking=yes -n dev@build-01.example "));
    CHECK(contains(calls, "StrictHostKeyChecking=yes dev@build-01.example "));  // the write: stdin, no -n
}

TEST_CASE("tools runtime: x-tool-runtime picks a running container per call, checked and bounded",
          "[integration][tools-runtime]") {
    FakeIsolates fake;
    fs::create_directories(fake.root / "box1");
    SECTION("a server without --tools-runtime runs the call where the header says") {
        ServerProcess s(small_stories_args({"--tools", "get_info,read_file"}), std::chrono::seconds(60), ServerProcess::WaitFor::Ready, fake.env());
        Client c("127.0.0.1", s.port());
        json r = call(c, {{"tool", "get_info"}}, {{"x-tool-runtime", "docker-container:box1"}});
        CHECK(r["cwd"] == (fake.root / "box1").string());
        r = call(c, {{"tool", "get_info"}});  // without it: this host
        CHECK(r["cwd"] == fs::current_path().string());
        auto bad = [&](const std::string& spec, const std::string& words) {
            INFO(spec);
            const auto res = c.post("/tools", R"({"tool": "get_info"})", {{"x-tool-runtime", spec}});
            CHECK(res.status == 400);
            CHECK(contains(res.json()["error"]["message"].get<std::string>(), words));
        };
        bad("docker-container:--privileged", "invalid container id");
        bad("ssh:-oProxyCommand=sh", "invalid ssh target");
        bad("docker:alpine", "can only name a running one");
        bad("vm:thing", "unknown tool runtime");
        CHECK_FALSE(contains(fake.file("calls"), "privileged"));
        CHECK_FALSE(contains(fake.file("calls"), "ProxyCommand"));
    }
    SECTION("a server confined by --tools-runtime keeps its tools there") {
        ServerProcess s(small_stories_args({"--tools", "get_info", "--tools-runtime", "docker-container:box1"}),
                        std::chrono::seconds(60), ServerProcess::WaitFor::Ready, fake.env());
        Client c("127.0.0.1", s.port());
        const auto res = c.post("/tools", R"({"tool": "get_info"})", {{"x-tool-runtime", "ssh:elsewhere"}});
        CHECK(res.status == 403);
        CHECK(contains(res.json()["error"]["message"].get<std::string>(), "docker-container:box1"));
        CHECK(call(c, {{"tool", "get_info"}}, {{"x-tool-runtime", "docker-container:box1"}})["cwd"] ==
              (fake.root / "box1").string());
        CHECK(call(c, {{"tool", "get_info"}})["cwd"] == (fake.root / "box1").string());
    }
}

TEST_CASE("tools runtime: bad --tools-runtime values and a container that cannot start stop the server",
          "[integration][tools-runtime]") {
    FakeIsolates fake;
    auto start = [&](const std::string& spec) {
        ServerProcess s(small_stories_args({"--tools", "get_info", "--tools-runtime", spec}), std::chrono::seconds(60), ServerProcess::WaitFor::Nothing, fake.env());
        return std::pair{s.wait_exit(), s.log()};
    };
    auto [code, log] = start("bogus:thing");
    CHECK(code == 2);
    CHECK(contains(log, "--tools-runtime: unknown tool runtime \"bogus:thing\""));
    std::tie(code, log) = start("docker-container:-v");
    CHECK(code == 2);
    CHECK(contains(log, "invalid container id"));
    std::tie(code, log) = start("docker:");
    CHECK(code == 2);
    {
        // The same from llama-server's variable.
        auto env = fake.env();
        env.push_back("LLAMA_ARG_TOOLS_RUNTIME=ssh:-oProxyCommand=x");
        ServerProcess s(small_stories_args({"--tools", "get_info"}), std::chrono::seconds(60),
                        ServerProcess::WaitFor::Nothing, env);
        CHECK(s.wait_exit() == 2);
        CHECK(contains(s.log(), "--tools-runtime: invalid ssh target"));
    }
    std::tie(code, log) = start("docker:missing");
    CHECK(code == 1);
    CHECK(contains(log, "did not start"));
    CHECK(contains(log, "Unable to find image 'missing:latest' locally"));
    // Without built-in tools there is nothing to run there: no container is started.
    FakeIsolates unused;
    ServerProcess s(small_stories_args({"--tools-runtime", "docker:debian"}), std::chrono::seconds(60),
                    ServerProcess::WaitFor::Ready, unused.env());
    CHECK(s.wait_log("no built-in tools are enabled"));
    CHECK(unused.file("calls").empty());
}

TEST_CASE("tools: get_datetime answers UTC in the format asked", "[integration][builtin-tools]") {
    ServerProcess s(small_stories_args({"--tools", "get_datetime"}));
    Client c("127.0.0.1", s.port());
    const auto year_now = [] {
        const std::time_t t = std::time(nullptr);
        std::tm tm{};
        gmtime_r(&t, &tm);
        return 1900 + tm.tm_year;
    };
    const int before = year_now();
    json r = call(c, {{"tool", "get_datetime"}});
    CHECK(std::regex_match(r["result"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
    r = call(c, {{"tool", "get_datetime"}, {"params", {{"format", "%Y"}}}});
    const int year = std::stoi(r["result"].get<std::string>());
    CHECK(year >= before);
    CHECK(year <= year_now());
    CHECK(call(c, {{"tool", "get_datetime"}, {"params", {{"format", ""}}}})["error"] == "invalid format string");
    CHECK(call(c, {{"tool", "get_datetime"}, {"params", {{"format", std::string(300, 'x')}}}})["error"] ==
          "invalid format string");
}

TEST_CASE("tools: exec_shell_command streams its output as SSE chunks, whole UTF-8 characters each",
          "[integration][builtin-tools]") {
    ctxtest::TempDir work;
    ServerProcess s(small_stories_args({"--tools", "exec_shell_command,read_file"}));
    Client c("127.0.0.1", s.port());
    std::vector<json> events;
    const json body = {{"tool", "exec_shell_command"},
                       {"params", {{"command", "printf 'one\\n'; printf '\\303'; sleep 0.2; printf '\\251 two'; exit 2"}}},
                       {"stream", true}};
    const auto res = c.stream("POST", "/tools", body.dump(), {{"x-tool-cwd", work.path.string()}},
                              [&](const server::http::SseEvent& e) {
                                  events.push_back(json::parse(e.data));
                                  return true;
                              });
    CHECK(res.status == 200);
    CHECK(res.complete);
    REQUIRE(events.size() >= 2);
    std::string text;
    for (size_t i = 0; i + 1 < events.size(); ++i) {
        REQUIRE(events[i].contains("chunk"));
        text += events[i]["chunk"].get<std::string>();  // a chunk that split é would have been replaced
    }
    CHECK(text == "one\n\u00e9 two\n[exit code: 2]");
    CHECK(events.back() == json{{"done", true}});
    // A tool that cannot stream says so.
    const auto r = c.post("/tools", R"({"tool": "read_file", "params": {"path": "x"}, "stream": true})");
    CHECK(r.status == 400);
    CHECK(contains(r.json()["error"]["message"].get<std::string>(), "does not support stream"));
}
