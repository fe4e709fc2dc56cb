// exec_shell_command, get_info and the subprocess runner: output, exit codes, caps, deadlines,
// cancellation, process groups killed, children reaped.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>

#include "server/tools/subprocess.h"
#include "tools_util.h"

using json = nlohmann::json;

namespace {
// No child of this process is left, not even a zombie.
bool no_children_left() {
    int status;
    return waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
}
}  // namespace

TEST_CASE("tools exec_shell_command: output, exit code, working directory", "[tools]") {
    TempDir d;
    d.write("here.txt", "");
    CHECK(call_tool("exec_shell_command", {{"command", "echo out; echo err >&2; exit 3"}}, d.str())["plain_text_response"] ==
          "out\nerr\n\n[exit code: 3]");
    CHECK(call_tool("exec_shell_command", {{"command", "ls"}}, d.str())["plain_text_response"] == "here.txt\n\n[exit code: 0]");
    CHECK(call_tool("exec_shell_command", {{"command", "cat"}}, d.str())["plain_text_response"] == "\n[exit code: 0]");  // stdin is empty
    CHECK(no_children_left());
}

TEST_CASE("tools exec_shell_command: output beyond the cap is dropped, the command still finishes", "[tools]") {
    TempDir d;
    const std::string text =
        call_tool("exec_shell_command", {{"command", "head -c 1000000 /dev/zero | tr '\\0' x; echo; exit 7"}, {"max_output_size", 100}},
                  d.str())["plain_text_response"];
    CHECK(text == std::string(100, 'x') + "\n[output truncated]\n[exit code: 7]");
    // The cap is at most 16 KiB whatever is asked.
    const std::string big = call_tool("exec_shell_command",
                                      {{"command", "head -c 100000 /dev/zero"}, {"max_output_size", 1000000}}, d.str())
                                ["plain_text_response"];
    CHECK(big.size() == 16384 + std::string("\n[output truncated]\n[exit code: 0]").size());
}

TEST_CASE("tools run_process: at the deadline the whole process group is killed and reaped", "[tools]") {
    REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    tools::ProcessOptions po;
    po.timeout = std::chrono::milliseconds(300);
    // A background child holding the pipe, and the shell waiting: both belong to the group.
    const tools::ProcessResult r = tools::run_process({"/bin/sh", "-c", "sleep 1000 & echo $!; wait"}, po);
    CHECK(r.timed_out);
    CHECK(r.exit_code == 128 + SIGKILL);
    const pid_t bg = (pid_t)std::stol(r.output);
    // This process is the orphan's subreaper, so the background sleep is its child now: waiting for it
    // ends once the group's SIGKILL has reached it (a sleep that survived would run 1000 s).
    int status = 0;
    REQUIRE(waitpid(bg, &status, 0) == bg);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    CHECK(no_children_left());
}

TEST_CASE("tools run_process: a cancelled call is killed at once", "[tools]") {
    std::atomic<int> polls{0};
    tools::ProcessOptions po;
    po.timeout = std::chrono::seconds(60);
    po.cancelled = [&] { return ++polls > 1; };  // the client goes away right after the start
    const auto t0 = std::chrono::steady_clock::now();
    const tools::ProcessResult r = tools::run_process({"/bin/sh", "-c", "exec sleep 1000"}, po);
    CHECK(r.cancelled);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 128 + SIGKILL);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
    CHECK(no_children_left());
}

TEST_CASE("tools run_process: a child that closes its output is still waited for, then reaped", "[tools]") {
    tools::ProcessOptions po;
    const tools::ProcessResult r = tools::run_process({"/bin/sh", "-c", "exec >&- 2>&-; exit 5"}, po);
    CHECK(r.exit_code == 5);
    CHECK(r.output.empty());
    const tools::ProcessResult missing = tools::run_process({"/no/such/program"}, po);
    CHECK_FALSE(missing.spawn_error.empty());
    CHECK(missing.exit_code == -1);
    CHECK(no_children_left());
}

TEST_CASE("tools exec_shell_command: the timeout parameter kills a command that runs too long", "[tools]") {
    TempDir d;
    const std::string text =
        call_tool("exec_shell_command", {{"command", "echo started; exec sleep 1000"}, {"timeout", 1}}, d.str())
            ["plain_text_response"];
    CHECK(text == "started\n\n[exit code: 137] [exit due to timed out]");
    CHECK(no_children_left());
}

TEST_CASE("tools get_info: the OS and the working directory", "[tools]") {
    TempDir d;
    const json r = call_tool("get_info", json::object(), d.str());
    CHECK(r["cwd"] == d.str());
    CHECK(r["os"].get<std::string>().find("Linux") != std::string::npos);
}
