// -ngl without a usable GPU: run and serve warn and run on the CPU (llama-server's behaviour: compose files
// carry -ngl 99); bench, and a device named with --device, stop at once, before loading the model, with
// exit code 2 and the reason (cuda_status(): no CUDA support in this build, no device, no driver).
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "ggml/backend.h"
#include "cli_process.h"
#include "server/http/client.h"
#include "server_process.h"

namespace {

using Result = CliResult;

Result ggserve(const std::string& args) {
    return run_ggserve(args);
}

// The device option that cannot work here: any -ngl without devices, an index past the last one with.
std::string unusable_device() {
    const int n = ggml::cuda_device_count();
    return n == 0 ? "" : " --device CUDA" + std::to_string(n);
}

}  // namespace

TEST_CASE("serve -ngl 99 without any GPU runs on the CPU with a warning, as llama-server does",
          "[integration][cli][gpu]") {
    if (ggml::cuda_device_count() > 0) {
        // A GPU that is named but does not exist is still an error.
        const Result r = ggserve("serve -m " + stories_model() + " --port 0 -ngl 99" + unusable_device());
        INFO(r.output);
        REQUIRE(r.code == 2);
        REQUIRE(r.output.find(ggml::cuda_status()) != std::string::npos);
        return;
    }
    // Compose files carry -ngl 99 (and all, -1) whatever the machine: the server starts and serves.
    for (const char* ngl : {"99", "all", "-1"}) {
        INFO(ngl);
        ServerProcess s({"-m", stories_model(), "-c", "256", "-t", "1", "-ngl", ngl});
        server::http::Client c("127.0.0.1", s.port());
        const auto r = c.post("/completion", R"({"prompt": "Once upon a time", "n_predict": 4})");
        CHECK(r.status == 200);
        if (std::string(ngl) != "-1")  // -1 is auto: nothing to ignore
            CHECK(s.log().find("ignored, every layer runs on the CPU") != std::string::npos);
    }
}

TEST_CASE("bench refuses -ngl without a usable GPU, and a named device that is missing stops run and serve",
          "[integration][cli][gpu]") {
    // A model that does not exist: reaching the loader would be exit code 1.
    std::vector<std::string> cmds = {"bench -m /nonexistent.gguf -ngl 0,99"};
    const std::string named = ggml::cuda_device_count() == 0 ? " --device CUDA0" : unusable_device();
    cmds.push_back("run -m /nonexistent.gguf -p hi -ngl 1" + named);
    cmds.push_back("serve -m /nonexistent.gguf -ngl 1" + named);
    for (const std::string& cmd : cmds) {
        const Result r = ggserve(cmd + (cmd.rfind("bench", 0) == 0 ? unusable_device() : ""));
        INFO(cmd << "\n" << r.output);
        REQUIRE(r.code == 2);
        REQUIRE(r.output.find(ggml::cuda_status()) != std::string::npos);
    }
}

TEST_CASE("device none keeps every layer on the CPU, bad device names are usage errors",
          "[integration][cli][gpu]") {
    const Result none =
        ggserve("run -m " + stories_model() + " -p Hello -n 4 -t 1 --temp 0 -ngl 99 --device none");
    INFO(none.output);
    REQUIRE(none.code == 0);
    REQUIRE(ggserve("run -m " + stories_model() + " -p hi --device GPU0").code == 2);
    REQUIRE(ggserve("run -m " + stories_model() + " -p hi --device CUDA1 -mg 0").code == 2);
    REQUIRE(ggserve("run -m " + stories_model() + " -p hi -mg -1").code == 2);
}
