// --log-prompts-dir (llama-server's): each generation request's prompt, the chat template applied, in a
// file of its own named after the milliseconds since the start; a directory that is not there stops the
// start.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_process.h"
#include "context_util.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {
std::string read_all(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}
}  // namespace

TEST_CASE("log prompts dir: every generation request's prompt in a file of its own", "[integration][prompt-log]") {
    ctxtest::TempDir dir;
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--log-prompts-dir", dir.path.string()});
    Client c("127.0.0.1", s.port());
    const json messages = json::array({{{"role", "user"}, {"content", "Once upon a time"}}});
    REQUIRE(c.post("/v1/chat/completions", json{{"messages", messages}, {"max_tokens", 4}}.dump()).status == 200);
    REQUIRE(c.post("/completion", json{{"prompt", "Lily had a ball"}, {"n_predict", 4}}.dump()).status == 200);
    REQUIRE(c.post("/tokenize", json{{"content", "not generation"}}.dump()).status == 200);  // not logged
    const std::string templated = c.post("/apply-template", json{{"messages", messages}}.dump()).json()["prompt"];

    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir.path)) files.push_back(e.path());
    std::sort(files.begin(), files.end());  // zero-padded milliseconds: in the order written
    REQUIRE(files.size() == 2);
    for (const auto& f : files) {
        CHECK(std::regex_match(f.filename().string(), std::regex("[0-9]{12}\\.txt")));
        struct stat st {};
        REQUIRE(stat(f.c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0600);  // prompts are private
    }
    CHECK(read_all(files[0]) == templated);
    CHECK(read_all(files[1]) == "Lily had a ball");
}

TEST_CASE("log prompts dir: a directory that is not there stops the start", "[integration][prompt-log]") {
    const CliResult r = run_ggserve("serve -m " + stories_model() + " --port 0 --log-prompts-dir /nonexistent/prompts");
    CHECK(r.code == 2);
    CHECK(r.output.find("--log-prompts-dir '/nonexistent/prompts' is not a directory") != std::string::npos);
}
