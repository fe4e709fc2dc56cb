// `ggserve serve` configured by llama-server's environment variables (LLAMA_ARG_*, LLAMA_API_KEY): each
// setting takes effect, flags win over the environment, the environment wins over --config, and a bad
// value is exit code 2 naming the variable.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "context_util.h"
#include "server/http/client.h"
#include "server_process.h"

namespace {

using nlohmann::json;
const server::http::Headers kAuth = {{"Authorization", "Bearer env-key"}};

json get_json(server::http::Client& c, const std::string& path) {
    const auto r = c.get(path, kAuth);
    INFO(path << ": " << r.body);
    REQUIRE(r.status == 200);
    return json::parse(r.body);
}

}  // namespace

TEST_CASE("settings given only as LLAMA_ARG_* variables take effect", "[integration][env]") {
    ServerProcess s({}, std::chrono::seconds(60), ServerProcess::WaitFor::Ready,
                    {"LLAMA_ARG_MODEL=" + stories_model(), "LLAMA_ARG_CTX_SIZE=768", "LLAMA_ARG_N_PARALLEL=3",
                     "LLAMA_ARG_N_PREDICT=7", "LLAMA_ARG_ALIAS=stories-from-env", "LLAMA_ARG_THREADS=1",
                     "LLAMA_ARG_ENDPOINT_METRICS=1", "LLAMA_API_KEY=env-key", "LLAMA_ARG_ENDPOINT_PROPS=true"});
    server::http::Client c("127.0.0.1", s.port());

    CHECK(c.get("/v1/models").status == 200);  // public, as in llama-server
    CHECK(c.get("/props").status == 401);      // LLAMA_API_KEY
    const auto props = get_json(c, "/props");
    CHECK(props["model_path"] == stories_model());
    CHECK(props["total_slots"] == 3);
    CHECK(props["model_alias"] == "stories-from-env");
    CHECK(props["default_generation_settings"]["n_ctx"] == 768 / 3);
    CHECK(props["default_generation_settings"]["params"]["n_predict"] == 7);
    CHECK(get_json(c, "/slots").size() == 3);
    CHECK(get_json(c, "/v1/models")["data"][0]["id"] == "stories-from-env");
    const auto m = c.get("/metrics", kAuth);
    CHECK(m.status == 200);  // LLAMA_ARG_ENDPOINT_METRICS
    // LLAMA_ARG_ENDPOINT_PROPS: POST /props may change the defaults (501 without it); its body needs no
    // prompt (schemas/props.json), and wrong types are still a 400.
    CHECK(c.post("/props", R"({"n_predict": 5})", kAuth).status == 200);
    CHECK(c.post("/props", R"({"temperature": "hot"})", kAuth).status == 400);
    CHECK(get_json(c, "/props")["default_generation_settings"]["params"]["n_predict"] == 5);
}

TEST_CASE("flags win over the environment, which wins over --config", "[integration][env]") {
    ctxtest::TempDir dir;
    std::ofstream(dir.file("cfg.json")) << R"({"parallel": 4, "alias": "from-file", "ctx-size": 1024, "metrics": true})";
    ServerProcess s({"--config", dir.file("cfg.json"), "-np", "2", "-t", "1"}, std::chrono::seconds(60),
                    ServerProcess::WaitFor::Ready,
                    {"LLAMA_ARG_MODEL=" + stories_model(), "LLAMA_ARG_N_PARALLEL=3", "LLAMA_ARG_ALIAS=from-env",
                     "LLAMA_ARG_ENDPOINT_METRICS=0", "LLAMA_ARG_ENDPOINT_SLOTS=off"});
    server::http::Client c("127.0.0.1", s.port());
    const auto props = json::parse(c.get("/props").body);
    CHECK(props["total_slots"] == 2);                              // flag over env and file
    CHECK(props["model_alias"] == "from-env");                     // env over file
    CHECK(props["default_generation_settings"]["n_ctx"] == 512);  // file over the default
    CHECK(c.get("/metrics").status == 501);  // LLAMA_ARG_ENDPOINT_METRICS=0 over the file
    CHECK(c.get("/slots").status == 501);  // LLAMA_ARG_ENDPOINT_SLOTS=off, as --no-slots
}

TEST_CASE("bad environment values are exit code 2 naming the variable", "[integration][env]") {
    struct Case {
        std::string var, value;
    };
    const Case cases[] = {
        {"LLAMA_ARG_CTX_SIZE", "lots"},
        {"LLAMA_ARG_N_PARALLEL", "0"},  // parses, but out of range: the check names the option
        {"LLAMA_ARG_ENDPOINT_METRICS", "maybe"},
        {"LLAMA_ARG_FLASH_ATTN", "sometimes"},
    };
    for (const auto& k : cases) {
        INFO(k.var << "=" << k.value);
        const auto r = ctxtest::run_cli({"serve", "-m", stories_model(), "--port", "0"}, {k.var + "=" + k.value});
        CHECK(r.status == 2);
        CHECK(r.err.find("listening") == std::string::npos);
        if (k.value != "0") {
            CHECK(r.err.find(k.var) != std::string::npos);
            CHECK(r.err.find(k.value) != std::string::npos);
        } else {
            CHECK(r.err.find("--parallel") != std::string::npos);
        }
    }
}

TEST_CASE("help lists the environment variables", "[integration][env]") {
    const auto r = ctxtest::run_cli({"serve", "--help"});
    CHECK(r.status == 0);
    for (const char* name : {"LLAMA_ARG_MODEL", "LLAMA_ARG_CTX_SIZE", "LLAMA_ARG_N_PARALLEL", "LLAMA_API_KEY",
                             "LLAMA_ARG_ENDPOINT_METRICS", "LLAMA_ARG_BATCH", "LLAMA_ARG_N_GPU_LAYERS"})
        CHECK(r.out.find(std::string("(env: ") + name + ")") != std::string::npos);
}
