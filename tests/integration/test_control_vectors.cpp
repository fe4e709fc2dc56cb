// Control vectors through the server (--control-vector, --control-vector-scaled,
// --control-vector-layer-range and their LLAMA_ARG_* variables): what they change in greedy output,
// what /props reports, and the files and ranges that stop startup (exit code 2 with the reason).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "../control_vector_files.h"
#include "cli_process.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

constexpr int kLayers = 5;  // stories260K
constexpr int64_t kEmbd = 64;

struct Vectors {
    cvec_files::Directions a = cvec_files::random(kLayers, kEmbd, 31, 0.6f);
    cvec_files::Directions b = cvec_files::random(kLayers, kEmbd, 32, 0.6f);
    std::string zero = cvec_files::write(cvec_files::zeros(kLayers, kEmbd));
    std::string fa = cvec_files::write(a);
    std::string fb = cvec_files::write(b);
    // Powers of two: the products are exact, so the sum file holds the very floats the server adds up.
    std::string sum = cvec_files::write(cvec_files::scaled_sum(a, 0.5f, b, -2.0f));
    ~Vectors() {
        for (const auto& p : {zero, fa, fb, sum}) std::filesystem::remove(p);
    }
};

json greedy(Client& c) {
    const auto r = c.post(
        "/completion",
        json{{"prompt", "Once upon a time"}, {"n_predict", 32}, {"temperature", 0}, {"return_tokens", true}}
            .dump());
    REQUIRE(r.status == 200);
    return r.json()["tokens"];
}

json run(const std::vector<std::string>& a, std::vector<std::string> env = {}) {
    ServerProcess s(a, std::chrono::seconds(60), ServerProcess::WaitFor::Ready, std::move(env));
    Client c("127.0.0.1", s.port());
    return greedy(c);
}

}  // namespace

TEST_CASE("control vectors: zero, scale 0 and an empty layer range leave the output alone",
          "[integration][cvec]") {
    Vectors v;
    const json base = run(small_stories_args({}));
    REQUIRE(base.size() > 8);
    CHECK(run(small_stories_args({"--control-vector", v.zero})) == base);
    CHECK(run(small_stories_args({"--control-vector-scaled", v.fa, "0"})) == base);
    CHECK(run(small_stories_args({"--control-vector", v.fa, "--control-vector-layer-range", "50", "60"})) == base);

    const json steered = run(small_stories_args({"--control-vector", v.fa}));
    CHECK(steered != base);
    // The same through the environment, llama-server's LLAMA_ARG_* names.
    CHECK(run(small_stories_args({}), {"LLAMA_ARG_CONTROL_VECTOR=" + v.fa}) == steered);
    CHECK(run(small_stories_args({"--control-vector", v.fa}), {"LLAMA_ARG_CONTROL_VECTOR_LAYER_RANGE=50 60"}) == base);
}

TEST_CASE("control vectors: two files act as one file holding their scaled sum, and /props reports them",
          "[integration][cvec]") {
    Vectors v;
    const json one = run(small_stories_args({"--control-vector", v.sum}));
    CHECK(one != run(small_stories_args({})));
    // Both spellings of --control-vector-scaled.
    CHECK(run(small_stories_args({"--control-vector-scaled", v.fa, "0.5", "--control-vector-scaled", v.fb, "-2"})) == one);
    CHECK(run(small_stories_args({"--control-vector-scaled", v.fa + ":0.5," + v.fb + ":-2"})) == one);

    ServerProcess s(small_stories_args({"--control-vector-scaled", v.fa + ":0.5", "--control-vector", v.fb,
                          "--control-vector-layer-range", "2", "3"}));
    Client c("127.0.0.1", s.port());
    const json props = c.get("/props").json();
    const json cv = props["server"]["control_vectors"];
    INFO(props.dump());
    CHECK(cv["files"] == json::array({{{"path", v.fa}, {"scale", 0.5}}, {{"path", v.fb}, {"scale", 1.0}}}));
    CHECK(cv["layer_range"] == json::array({2, 3}));
    CHECK(cv["layers"] == json::array({2, 3}));
    CHECK(s.log().find("control vectors: 2 file(s), layers 2..3: 2 layer outputs steered") !=
          std::string::npos);
}

TEST_CASE("control vectors: slots cannot be saved or restored while they steer the model", "[integration][cvec]") {
    Vectors v;
    const auto dir = std::filesystem::temp_directory_path() / ("ggserve-cvec-slots-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    {
        // A file saved by the same server without the vector, to try restoring into a steered one.
        ServerProcess plain(small_stories_args({"--slot-save-path", dir.string()}));
        Client c("127.0.0.1", plain.port());
        greedy(c);
        REQUIRE(c.post("/slots/0?action=save", json{{"filename", "plain.bin"}}.dump()).status == 200);
    }
    ServerProcess s(small_stories_args({"--control-vector", v.fa, "--slot-save-path", dir.string()}));
    Client c("127.0.0.1", s.port());
    greedy(c);
    for (const char* action : {"save", "restore"}) {
        INFO(action);
        const auto r = c.post(std::string("/slots/0?action=") + action, json{{"filename", "plain.bin"}}.dump());
        INFO(r.body);
        REQUIRE(r.status == 400);
        REQUIRE(r.body.find("control vectors") != std::string::npos);
    }
    greedy(c);  // the server goes on serving
    std::filesystem::remove_all(dir);
}

TEST_CASE("control vectors: bad files and ranges stop startup with the reason", "[integration][cvec]") {
    Vectors v;
    const std::string wide = cvec_files::write({{1, std::vector<float>(65, 0.5f)}});
    const std::string empty = cvec_files::write({});
    const std::string base = "serve --port 0 -m " + stories_model() + " ";
    const std::pair<std::string, std::string> cases[] = {
        {"--control-vector " + wide, "65 values per layer; the model's n_embd is 64"},
        {"--control-vector " + empty, "no direction tensors"},
        {"--control-vector " + stories_model(), "is not a direction tensor"},
        {"--control-vector /nonexistent/cv.gguf", "control vector /nonexistent/cv.gguf"},
        {"--control-vector " + v.fa + " --control-vector-layer-range 3 1", "the start is after the end"},
        {"--control-vector " + v.fa + " --control-vector-layer-range 3", "takes START END"},
        {"--control-vector-layer-range 1 2", "needs --control-vector"},
        {"--control-vector-scaled " + v.fa + ":x", "bad scale"},
    };
    for (const auto& [flags, why] : cases) {
        INFO(flags);
        const CliResult r = run_ggserve(base + flags);
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK(r.output.find(why) != std::string::npos);
    }
    std::filesystem::remove(wide);
    std::filesystem::remove(empty);
}
