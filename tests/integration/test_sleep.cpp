// --sleep-idle-seconds against the real binary: after the idle period the server reports is_sleeping, has
// given memory back (its resident set shrinks), answers /health, /props, /slots and /tokenize while asleep,
// and the next request wakes it with the same tokens as before (the weights faulted back in from the mapping,
// or read from the file again with --no-mmap). Bad values stop startup.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli_process.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

long rss_kib(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

bool wait_sleeping(Client& c, bool want, std::chrono::seconds limit) {
    for (auto until = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < until;) {
        if (c.get("/props").json()["is_sleeping"] == want) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

std::vector<int> greedy_tokens(Client& c, int n) {
    const json r = c.post("/completion", json{{"prompt", stories_golden()["cases"][0]["prompt"]},
                                              {"n_predict", n},
                                              {"temperature", 0},
                                              {"return_tokens", true}}
                                              .dump())
                       .json();
    return r["tokens"].get<std::vector<int>>();
}

}  // namespace

TEST_CASE(
    "sleep (--sleep-idle-seconds): the server sleeps when idle, gives memory back, wakes with the same "
    "tokens",
    "[integration][threads][sleep]") {
    const auto golden = stories_golden()["cases"][0]["completion_tokens"].get<std::vector<int>>();
    const std::vector<int> want(golden.begin(), golden.begin() + 32);
    for (bool mmap : {true, false}) {
        INFO((mmap ? "mmap" : "--no-mmap"));
        // A large KV cache (about 160 MiB at f32) makes the memory given back plain to see.
        std::vector<std::string> args = {"-m", stories_model(), "-c", "65536", "-t", "1", "-np", "2",
                                         "-ctk", "f32", "-ctv", "f32", "--sleep-idle-seconds", "1"};
        if (!mmap) args.push_back("--no-mmap");
        ServerProcess s(args);
        Client c("127.0.0.1", s.port());
        const json props = c.get("/props").json();
        CHECK(props["server"]["sleep_idle_seconds"] == 1);
        REQUIRE(greedy_tokens(c, 32) == want);
        const long awake = rss_kib(s.pid());

        REQUIRE(wait_sleeping(c, true, std::chrono::seconds(30)));
        CHECK(s.wait_log("sleeping after 1 s without work"));
        const long asleep = rss_kib(s.pid());
        INFO("resident KiB awake " << awake << ", asleep " << asleep);
        CHECK(asleep < awake - 64 * 1024);  // most of the KV cache's pages went back
        CHECK(c.get("/health").status == 200);
        CHECK(c.get("/slots").status == 200);
        CHECK(c.post("/tokenize", json{{"content", "Once upon a time"}}.dump()).json()["tokens"].size() > 0);
        CHECK(c.get("/props").json()["is_sleeping"] == true);  // none of these is work that wakes it

        // The next request wakes it: the same tokens (the weights are back, every cache was emptied).
        CHECK(greedy_tokens(c, 32) == want);
        CHECK(s.wait_log("awake again"));
        // It sleeps again after the next idle period, and wakes again.
        REQUIRE(wait_sleeping(c, true, std::chrono::seconds(30)));
        CHECK(greedy_tokens(c, 32) == want);
    }
}

TEST_CASE("sleep (--sleep-idle-seconds): a draft model sleeps and wakes with the target", "[integration][sleep]") {
    const auto golden = stories_golden()["cases"][0]["completion_tokens"].get<std::vector<int>>();
    const std::vector<int> want(golden.begin(), golden.begin() + 48);
    // --no-mmap: both models' weights are read from their files again on waking. (The tokens cannot show
    // whether the draft came back: verification keeps them exact whatever the draft proposes, and on this
    // tiny model the cost model rarely lets a draft run.)
    ServerProcess s({"-m", stories_model(), "-md", shared_path("models/stories260K-q8_0.gguf"), "--spec-type",
                     "draft-simple", "--no-mmap", "-c", "4096", "-t", "1", "--sleep-idle-seconds", "1"});
    Client c("127.0.0.1", s.port());
    REQUIRE(greedy_tokens(c, 48) == want);
    REQUIRE(wait_sleeping(c, true, std::chrono::seconds(30)));
    CHECK(greedy_tokens(c, 48) == want);  // both models back, both caches emptied
    CHECK(c.get("/props").json()["is_sleeping"] == false);
}

TEST_CASE("sleep (--sleep-idle-seconds): bad values stop startup, -1 never sleeps", "[integration][sleep]") {
    for (const char* bad : {"0", "-5", "soon"}) {
        INFO(bad);
        const CliResult r = run_ggserve("serve --port 0 -m " + stories_model() + " --sleep-idle-seconds " + bad);
        CHECK(r.code == 2);
        CHECK(r.output.find("--sleep-idle-seconds") != std::string::npos);
    }
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--sleep-idle-seconds", "-1"});
    Client c("127.0.0.1", s.port());
    CHECK(c.get("/props").json()["server"]["sleep_idle_seconds"] == -1);
    CHECK(c.get("/props").json()["is_sleeping"] == false);
}
