// -ngl without a usable GPU: run, serve and bench stop at once, before loading the model, with exit code
// 2 and the reason (cuda_status(): no CUDA support in this build, no device, no driver).
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <string>

#include "ggml/backend.h"
#include "cli_process.h"
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

TEST_CASE("serve -ngl 99 without a usable GPU exits at once with code 2 and the reason",
          "[integration][cli][gpu]") {
    const Result r = ggserve("serve -m " + stories_model() + " --port 0 -ngl 99" + unusable_device());
    INFO(r.output);
    REQUIRE(r.code == 2);
    REQUIRE(r.output.find(ggml::cuda_status()) != std::string::npos);
    if (ggml::cuda_device_count() == 0) {
        REQUIRE(r.output.find("no GPU to offload to") != std::string::npos);
        if (ggml::cuda_status().find("no CUDA support") != std::string::npos)  // a CPU-only build
            REQUIRE(r.output.find("this build has no CUDA support (rebuild with -DGGML_CUDA=ON)") !=
                    std::string::npos);
    }
    REQUIRE(r.seconds < 10);
}

TEST_CASE("run and bench refuse -ngl without a usable GPU before loading the model",
          "[integration][cli][gpu]") {
    // A model that does not exist: reaching the loader would be exit code 1.
    for (const std::string cmd :
         {"run -m /nonexistent.gguf -p hi -ngl 1", "serve -m /nonexistent.gguf -ngl 1",
          "bench -m /nonexistent.gguf -ngl 0,99"}) {
        const Result r = ggserve(cmd + unusable_device());
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
