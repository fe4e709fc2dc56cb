// What the isolate runtimes are built on: run_process feeding stdin and reporting output as it comes,
// the quoting of an ssh command string, and the runtime specs (what they accept and what they refuse).
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "server/tools/isolate_io.h"
#include "server/tools/subprocess.h"

TEST_CASE("tools run_process: stdin data larger than a pipe reaches a child that answers as it reads", "[tools]") {
    std::string data;
    for (int i = 0; data.size() < (1u << 20); ++i) data += std::to_string(i) + "\n";
    tools::ProcessOptions po;
    po.stdin_data = data;
    po.max_output = 2u << 20;
    po.timeout = std::chrono::seconds(30);
    // cat writes back while it reads: neither side may wait for the other with a full pipe.
    const tools::ProcessResult r = tools::run_process({"cat"}, po);
    CHECK(r.exit_code == 0);
    CHECK(r.output == data);
    po.stdin_data = "";
    CHECK(tools::run_process({"cat"}, po).output.empty());  // an empty stdin is at its end at once
    // A child that does not read it: the rest is dropped, nothing blocks (and no SIGPIPE ends us).
    po.stdin_data = data;
    const tools::ProcessResult head = tools::run_process({"head", "-c", "3"}, po);
    CHECK(head.output == "0\n1");
    CHECK_FALSE(head.timed_out);
}

TEST_CASE("tools run_process: output as it comes, a reader that stops the child, stderr kept apart", "[tools]") {
    tools::ProcessOptions po;
    std::vector<std::string> pieces;
    po.on_output = [&](std::string_view s) {
        pieces.emplace_back(s);
        return true;
    };
    po.max_output = 5;
    tools::ProcessResult r = tools::run_process({"sh", "-c", "printf abc; printf defgh"}, po);
    std::string joined;
    for (const auto& p : pieces) joined += p;
    CHECK(joined == "abcde");  // only what fits under the cap
    CHECK(r.truncated);
    po.max_output = 1 << 16;
    po.on_output = [](std::string_view) { return false; };
    r = tools::run_process({"sh", "-c", "echo first; exec sleep 1000"}, po);
    CHECK(r.cancelled);
    CHECK_FALSE(r.timed_out);
    po.on_output = nullptr;
    po.merge_stderr = false;
    r = tools::run_process({"sh", "-c", "echo out; echo err >&2"}, po);
    CHECK(r.output == "out\n");
}

TEST_CASE("tools shell_quote_join: a shell splits it back into the same words", "[tools]") {
    const std::vector<std::string> words = {"plain", "two words", "it's", "'", "\"$HOME\"", "`id`", "a\nb", "", ";|&*?"};
    const std::string joined = tools::shell_quote_join(words);
    // printf prints each argument as <arg>; the shell must hand every word over unchanged.
    tools::ProcessOptions po;
    const tools::ProcessResult r = tools::run_process({"sh", "-c", "printf '<%s>' " + joined}, po);
    std::string expected;
    for (const auto& w : words) expected += "<" + w + ">";
    CHECK(r.output == expected);
}

TEST_CASE("tools parse_runtime_spec: the forms llama-server takes, and ids that would become options", "[tools]") {
    using K = tools::RuntimeSpec::Kind;
    auto spec = tools::parse_runtime_spec("docker:debian:bookworm-slim");
    CHECK((spec.kind == K::spawn && spec.engine == "docker" && spec.arg == "debian:bookworm-slim"));
    spec = tools::parse_runtime_spec("podman:registry.local/tools:1");
    CHECK((spec.kind == K::spawn && spec.engine == "podman" && spec.arg == "registry.local/tools:1"));
    spec = tools::parse_runtime_spec("docker-container:3f2a_box-1.x");
    CHECK((spec.kind == K::container && spec.engine == "docker" && spec.arg == "3f2a_box-1.x"));
    spec = tools::parse_runtime_spec("podman-container:abc");
    CHECK((spec.kind == K::container && spec.engine == "podman"));
    spec = tools::parse_runtime_spec("ssh:dev@build-01.example");
    CHECK((spec.kind == K::ssh && spec.arg == "dev@build-01.example"));
    for (const char* bad : {"", "docker", "docker:", "docker:-v", "docker-container:", "docker-container:-v",
                            "docker-container:a b", "docker-container:a;b", "ssh:", "ssh:-oProxyCommand=x",
                            "ssh:host:22", "ssh:a b", "lxc:thing"}) {
        INFO(bad);
        CHECK_THROWS_AS(tools::parse_runtime_spec(bad), std::invalid_argument);
    }
    // A call can name a running isolate only; starting a container is the server's (--tools-runtime).
    CHECK_THROWS_WITH(tools::make_isolate_io(tools::parse_runtime_spec("docker:alpine")),
                      Catch::Contains("can only name a running one"));
    CHECK(tools::make_isolate_io(tools::parse_runtime_spec("ssh:host")) != nullptr);
}

TEST_CASE("tools isolate paths: relative to the call's directory, else left to the isolate", "[tools]") {
    const auto io = tools::make_isolate_io(tools::parse_runtime_spec("docker-container:box"));
    CHECK(io->resolve("a/../b.txt", "/work") == "/work/b.txt");
    CHECK(io->resolve("/etc/./hosts", "/work") == "/etc/hosts");
    CHECK(io->resolve("notes.txt", "") == "notes.txt");
    CHECK(io->resolve("dir/", "/w") == "/w/dir");
    CHECK(io->resolve(".", "") == ".");
}
