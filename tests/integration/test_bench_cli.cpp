// `ggserve bench`: llama-bench's JSON report, including tests at a depth (-d) of cached tokens.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_process.h"
#include "server_process.h"

TEST_CASE("bench -d runs each test after that many cached tokens and reports it like llama-bench",
          "[integration][cli][bench]") {
    const CliResult r = run_ggserve("bench -m " + stories_model() + " -p 16 -n 4 -d 0,64 -r 1 -t 1 -o json");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.output.substr(r.output.find('[')));
    REQUIRE(j.size() == 4);  // (pp16, tg4) x (d0, d64)
    std::vector<std::string> names;
    for (const auto& t : j) {
        names.push_back(t["test"].get<std::string>());
        REQUIRE(t["avg_ts"].get<double>() > 0);
        REQUIRE(t["n_depth"].get<int>() == (names.back().find("@ d64") != std::string::npos ? 64 : 0));
    }
    REQUIRE(names == std::vector<std::string>{"pp16", "tg4", "pp16 @ d64", "tg4 @ d64"});
    // Negative depths are usage errors, as negative sizes are.
    REQUIRE(run_ggserve("bench -m " + stories_model() + " -p 16 -n 0 -d -1 -r 1").code == 2);
}

TEST_CASE("GGML_CPU_PROFILE=1 prints the CPU graphs' time per kind of op when the process ends",
          "[integration][cli][bench]") {
    const std::string args = "bench -m " + stories_model() + " -p 32 -n 4 -r 1 -t 1";
    const CliResult r = run_ggserve_env("GGML_CPU_PROFILE=1", args);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const size_t table = r.output.find("GGML_CPU_PROFILE: CPU graph time by op");
    REQUIRE(table != std::string::npos);
    const std::string rows = r.output.substr(table);
    // Matrix products by weight type and by one column (decode) or more (the prompt); other ops by name.
    CHECK(rows.find("mul_mat f32 x f32 n>1") != std::string::npos);
    CHECK(rows.find("mul_mat f32 x f32 n=1") != std::string::npos);
    CHECK(rows.find("soft_max") != std::string::npos);
    CHECK(rows.find("rms_norm") != std::string::npos);
    CHECK(rows.find("\ntotal") != std::string::npos);
    // Off by default, and with 0.
    for (const char* env : {"GGML_CPU_PROFILE=0", "GGML_CPU_PROFILE="}) {
        const CliResult off = run_ggserve_env(env, args);
        REQUIRE(off.code == 0);
        CHECK(off.output.find("GGML_CPU_PROFILE") == std::string::npos);
    }
    CHECK(run_ggserve(args).output.find("GGML_CPU_PROFILE") == std::string::npos);
}
