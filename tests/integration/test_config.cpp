// `ggserve serve --config FILE`: the example in config/ works, flags win over the file, and a bad file is
// a clear error with exit code 2 before anything starts.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "context_util.h"
#include "server/http/client.h"
#include "server_process.h"

namespace {

// config/ggserve.json of this source tree (this file is tests/integration/test_config.cpp).
std::string example_config() {
    // The source directory comes from CMake: __FILE__ may be relative (ccache base_dir, other builds).
    return (std::filesystem::path(GGSERVE_SOURCE_DIR) / "config" / "ggserve.json")
        .string();
}

}  // namespace

TEST_CASE("the example config file configures the server, and flags win over it", "[integration][config]") {
    const auto cfg = nlohmann::json::parse(std::ifstream(example_config()));
    // The file asks for 4 slots, port 8080 and a 4096-token context; -np and --port (given by the harness)
    // must win.
    REQUIRE(cfg["parallel"] == 4);
    ServerProcess s({"--config", example_config(), "-m", stories_model(), "-np", "2", "-t", "1"});
    REQUIRE(s.port() != 8080);
    server::http::Client c("127.0.0.1", s.port());

    const auto slots = nlohmann::json::parse(c.get("/slots").body);
    CHECK(slots.size() == 2);
    const auto props = nlohmann::json::parse(c.get("/props").body);
    const auto& gen = props["default_generation_settings"]["params"];
    CHECK(props["default_generation_settings"]["n_ctx"] == cfg["ctx-size"].get<int>() / 2);
    CHECK(gen["top_k"] == cfg["top-k"]);
    CHECK(gen["temperature"].get<double>() == Approx(cfg["temp"].get<double>()));
    CHECK(gen["min_p"].get<double>() == Approx(cfg["min-p"].get<double>()));
    CHECK(c.get("/metrics").status == 200);  // "metrics": true
}

TEST_CASE("bad config files are a clear error with exit code 2", "[integration][config]") {
    ctxtest::TempDir dir;
    const auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir.file(name)) << text;
        return dir.file(name);
    };
    struct Case {
        std::string file, expect;
    };
    const Case cases[] = {
        {write("unknown.json", R"({"parallel": 2, "bogus": 1})"), "unknown option 'bogus'"},
        {write("broken.json", R"({"port": )"), "not valid JSON"},
        {write("type.json", R"({"parallel": "abc"})"), "invalid value 'abc' for --parallel"},
        {write("flag.json", R"({"metrics": 1})"), "must be true or false"},
        {write("array.json", R"([1, 2])"), "config"},
        {dir.file("missing.json"), "missing.json"},
    };
    for (const auto& k : cases) {
        INFO(k.file);
        const auto r = ctxtest::run_cli({"serve", "--config", k.file, "-m", stories_model(), "--port", "0"});
        CHECK(r.status == 2);
        CHECK(r.err.find(k.expect) != std::string::npos);
        CHECK(r.err.find("listening") == std::string::npos);
    }
}
