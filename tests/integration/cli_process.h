// Runs the real ggserve binary as a command-line tool and collects its exit code and output.
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <string>

#include "ggserve_binary.h"

struct CliResult {
    int code;
    std::string output;  // stdout and stderr
    double seconds;
};

// A shell command line, stderr merged into the output.
inline CliResult run_ggserve_cmd(const std::string& command) {
    const std::string cmd = command + " 2>&1";
    const auto t0 = std::chrono::steady_clock::now();
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    CliResult r{};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

// `ggserve ARGS` (ARGS as a shell would split them), stderr merged into the output.
inline CliResult run_ggserve(const std::string& args) {
    return run_ggserve_cmd(ggserve_binary() + " " + args);
}

// The same with environment assignments ("A=1 B=2") before the program.
inline CliResult run_ggserve_env(const std::string& env, const std::string& args) {
    return run_ggserve_cmd("env " + env + " " + ggserve_binary() + " " + args);
}
