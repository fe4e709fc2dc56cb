// The host-memory prompt cache (-cram/--cache-ram, --cache-idle-slots) against the real binary: a prompt
// whose slot was taken by an unrelated one is restored from RAM (few tokens evaluated, the reference
// tokens), --cache-ram 0 keeps nothing, --cache-idle-slots moves idle slots there, a small limit drops the
// least recently used state, and bad values stop the start.
#include <catch2/catch.hpp>
#include <filesystem>

#include "../lora_files.h"
#include "context_util.h"

using namespace ctxtest;
using server::http::Client;

namespace {

// A golden case's prompt followed by the first n tokens of its greedy completion: its greedy continuation is
// the rest of the completion.
json golden_prefix(const json& c, size_t n) {
    std::vector<int> t = c["prompt_tokens"].get<std::vector<int>>();
    const auto done = c["completion_tokens"].get<std::vector<int>>();
    t.insert(t.end(), done.begin(), done.begin() + (long)n);
    return t;
}

std::vector<int> golden_rest(const json& c, size_t n, size_t count) {
    const auto done = c["completion_tokens"].get<std::vector<int>>();
    return std::vector<int>(done.begin() + (long)n, done.begin() + (long)(n + count));
}

json ram_stats(uint16_t port) {
    Client c("127.0.0.1", port);
    return c.get("/props").json()["server"]["prompt_cache_ram"];
}

// A story of about n_words words whose first word is `name` (so that two of them share only BOS).
std::string story(const std::string& name, int n_words) {
    static const char* kWords[] = {"ran", "to", "the", "park", "and", "saw", "a", "big", "red", "ball", "then",
                                   "went", "home", "with", "mom", "happy"};
    std::string s = name;
    for (int i = 0; i < n_words; ++i) s += std::string(" ") + kWords[(i * 7 + (int)name.size()) % 16];
    return s;
}

}  // namespace

TEST_CASE("cache-ram: a prompt whose slot an unrelated one took is restored from RAM, with the reference tokens",
          "[integration][context][prompt_cache][cache_ram]") {
    const json g = stories_golden();
    const json& ca = g["cases"][2];
    const json& cb = g["cases"][3];
    const json a = golden_prefix(ca, 80), b = golden_prefix(cb, 60);
    const int n_a = (int)a.size();
    for (const std::string cram : {"16", "0"}) {
        INFO("--cache-ram " << cram);
        ServerProcess s({"-m", stories_model(), "-c", "1024", "-np", "1", "-t", "2", "--cache-ram", cram});
        Client c("127.0.0.1", s.port());
        const json props = c.get("/props").json()["server"];
        CHECK(props["cache_ram_mib"] == std::stoi(cram));
        CHECK(props["prompt_cache_ram"]["min_tokens"] == 32);

        const json r1 = complete(s.port(), a, 16);
        REQUIRE(r1["tokens"] == golden_rest(ca, 80, 16));
        REQUIRE(r1["timings"]["prompt_n"] == n_a);
        // B takes the only slot: A's state (prompt and generated tokens) goes to RAM first.
        const json r2 = complete(s.port(), b, 16);
        REQUIRE(r2["tokens"] == golden_rest(cb, 60, 16));
        REQUIRE(ram_stats(s.port())["entries"] == (cram == "0" ? 0 : 1));

        // A again.
        const json r3 = complete(s.port(), a, 16);
        REQUIRE(r3["tokens"] == golden_rest(ca, 80, 16));
        const int evaluated = r3["timings"]["prompt_n"].get<int>(), cached = r3["tokens_cached"].get<int>();
        REQUIRE(evaluated + cached == n_a);
        const json st = ram_stats(s.port());
        if (cram == "0") {
            REQUIRE(cached <= 1);  // BOS at most, which B's cache shares
            REQUIRE(st["entries"] == 0);
            REQUIRE(st["hits"] == 0);
            REQUIRE(st["bytes"] == 0);
        } else {
            REQUIRE(evaluated == 1);  // the last prompt token only
            REQUIRE(st["hits"] == 1);
            REQUIRE(st["tokens_restored"] == n_a - 1);
            REQUIRE(st["entries"] == 2);  // B's state went to RAM in turn
            REQUIRE(st["bytes"].get<int64_t>() > 0);
            WARN("prompt of " << n_a << " tokens: " << r1["timings"]["prompt_ms"].get<double>()
                              << " ms evaluated, " << r3["timings"]["prompt_ms"].get<double>()
                              << " ms restored from RAM (1 token evaluated)");
        }
    }
}

TEST_CASE("cache-idle-slots: seating a request moves the other idle slots' prompts to RAM",
          "[integration][context][prompt_cache][cache_ram]") {
    const json g = stories_golden();
    const json& ca = g["cases"][0];
    const json& cb = g["cases"][5];
    const json a = golden_prefix(ca, 70), b = golden_prefix(cb, 70);
    for (const bool idle : {true, false}) {
        INFO("--cache-idle-slots " << idle);
        std::vector<std::string> args = {"-m", stories_model(), "-c", "1024", "-np", "2", "-t", "2", "--metrics"};
        if (idle) args.push_back("--cache-idle-slots");
        ServerProcess s(args);
        REQUIRE(Client("127.0.0.1", s.port()).get("/props").json()["server"]["cache_idle_slots"] == idle);
        const json r1 = complete(s.port(), a, 8);
        REQUIRE(r1["id_slot"] == 0);
        // B goes to the empty slot 1; with the option, idle slot 0's state moves to RAM and the slot is emptied.
        const json r2 = complete(s.port(), b, 8);
        REQUIRE(r2["id_slot"] == 1);
        const json slots = Client("127.0.0.1", s.port()).get("/slots").json();
        REQUIRE(ram_stats(s.port())["entries"] == (idle ? 1 : 0));
        REQUIRE((slots[0]["n_past"] == 0) == idle);

        // A again: from its own slot, or restored from RAM. Same tokens, one token evaluated either way.
        const json r3 = complete(s.port(), a, 8);
        REQUIRE(r3["tokens"] == golden_rest(ca, 70, 8));
        REQUIRE(r3["tokens"] == r1["tokens"]);
        REQUIRE(r3["timings"]["prompt_n"] == 1);
        REQUIRE(metric(s.port(), "ggserve:prompt_cache_ram_hits_total") == (idle ? 1 : 0));
        REQUIRE(metric(s.port(), "ggserve:prompt_cache_ram_entries") == (idle ? 2 : 0));
    }
}

TEST_CASE("cache-ram: a small limit drops the least recently used state",
          "[integration][threads][context][prompt_cache][cache_ram]") {
    // About 640 bytes per token on stories260K (f16 K and V, 5 layers of 32 wide): states of ~600 tokens
    // take ~390 KB, so two fit in 1 MiB and a third evicts the oldest.
    ServerProcess s({"-m", stories_model(), "-c", "2048", "-np", "1", "-t", "2", "--cache-ram", "1", "--metrics"});
    const std::string x = story("Lily", 380), y = story("Ben", 380), z = story("Sue", 380), w = story("Max", 380);
    const json rx = complete(s.port(), x, 4);
    const int n_x = rx["timings"]["prompt_n"].get<int>();
    REQUIRE(n_x > 500);
    complete(s.port(), y, 4);  // X to RAM
    const int64_t one = ram_stats(s.port())["bytes"].get<int64_t>();
    INFO("one state: " << one << " bytes");
    REQUIRE((one * 2 < 1000 * 1000 && one * 3 > 1024 * 1024 + 3 * 4096));
    complete(s.port(), z, 4);  // Y to RAM
    REQUIRE(ram_stats(s.port())["entries"] == 2);
    REQUIRE(ram_stats(s.port())["evictions"] == 0);
    complete(s.port(), w, 4);  // Z to RAM: over the limit, X (the oldest) goes
    json st = ram_stats(s.port());
    REQUIRE(st["entries"] == 2);
    REQUIRE(st["evictions"] == 1);
    REQUIRE(st["bytes"].get<int64_t>() <= 1024 * 1024);

    // X is evaluated again in full (but BOS); Z, still in RAM, is restored.
    const json rx2 = complete(s.port(), x, 4);
    REQUIRE(rx2["timings"]["prompt_n"].get<int>() >= n_x - 1);
    REQUIRE(rx2["tokens"] == rx["tokens"]);
    const json rz = complete(s.port(), z, 4);
    REQUIRE(rz["timings"]["prompt_n"] == 1);
    st = ram_stats(s.port());
    REQUIRE(st["hits"] == 1);
    REQUIRE(metric(s.port(), "ggserve:prompt_cache_ram_evictions_total") == st["evictions"].get<double>());
    REQUIRE(metric(s.port(), "ggserve:prompt_cache_ram_bytes") == st["bytes"].get<double>());
}

TEST_CASE("cache-ram: a state computed with a LoRA adapter serves only prompts with the same scales",
          "[integration][context][prompt_cache][cache_ram][lora]") {
    const std::string adapter = lora_files::write_adapter(
        stories_model(), {"blk.0.attn_q.weight", "blk.1.ffn_up.weight", "output.weight"}, 4, 8.0f, 31);
    struct Remove {
        std::string path;
        ~Remove() { std::filesystem::remove(path); }
    } remove{adapter};
    const json g = stories_golden();
    const json p = golden_prefix(g["cases"][2], 60), q = golden_prefix(g["cases"][3], 60);
    const json on = json::array({{{"id", 0}, {"scale", 1.0}}}), off = json::array({{{"id", 0}, {"scale", 0.0}}});
    ServerProcess s({"-m", stories_model(), "-c", "1024", "-np", "1", "-t", "2", "-ctk", "f32", "-ctv", "f32",
                     "--lora", adapter, "--lora-init-without-apply"});
    const int n_p = (int)p.size();

    const json with_lora = complete(s.port(), p, 12, {{"lora", on}});
    complete(s.port(), q, 12);  // P's state (computed with the adapter) goes to RAM
    REQUIRE(ram_stats(s.port())["entries"] == 1);
    // P without the adapter: the state is not used.
    const json without = complete(s.port(), p, 12, {{"lora", off}});
    REQUIRE(without["timings"]["prompt_n"].get<int>() >= n_p - 1);
    REQUIRE(ram_stats(s.port())["hits"] == 0);
    REQUIRE(without["tokens"] != with_lora["tokens"]);  // the adapter changes the output
    // P with the adapter again: restored, the same tokens.
    const json again = complete(s.port(), p, 12, {{"lora", on}});
    REQUIRE(again["timings"]["prompt_n"] == 1);
    REQUIRE(ram_stats(s.port())["hits"] == 1);
    REQUIRE(again["tokens"] == with_lora["tokens"]);
    // And without it again: the state kept from the run without the adapter serves it, same tokens.
    const json without_again = complete(s.port(), p, 12, {{"lora", off}});
    REQUIRE(without_again["timings"]["prompt_n"] == 1);
    REQUIRE(without_again["tokens"] == without["tokens"]);
}

TEST_CASE("cache-ram: bad values stop the start with a clear message, LLAMA_ARG_CACHE_RAM sets it",
          "[integration][context][prompt_cache][cache_ram]") {
    const std::string m = stories_model();
    const CliResult abc = run_cli({"serve", "-m", m, "--port", "0", "--cache-ram", "abc"});
    CHECK(abc.status == 2);
    CHECK(abc.err.find("invalid value 'abc' for --cache-ram: expected an integer") != std::string::npos);
    const CliResult neg = run_cli({"serve", "-m", m, "--port", "0", "-cram", "-2"});
    CHECK(neg.status == 2);
    CHECK(neg.err.find("--cache-ram must be a size in MiB, -1 (no limit) or 0 (off)") != std::string::npos);
    const CliResult env = run_cli({"serve", "-m", m, "--port", "0"}, {"LLAMA_ARG_CACHE_RAM=lots"});
    CHECK(env.status == 2);
    CHECK(env.err.find("LLAMA_ARG_CACHE_RAM") != std::string::npos);
    // `run` has no host-memory cache: refused with the reason.
    const CliResult run = run_cli({"run", "-m", m, "-p", "Hi", "-n", "1", "--cache-ram", "64"});
    CHECK(run.status == 2);
    CHECK(run.err.find("belongs to the server") != std::string::npos);

    ServerProcess s({"-m", m, "-c", "256", "-np", "1", "-t", "1", "--cache-idle-slots"}, std::chrono::seconds(60),
                    ServerProcess::WaitFor::Ready, {"LLAMA_ARG_CACHE_RAM=0"});
    const json srv = Client("127.0.0.1", s.port()).get("/props").json()["server"];
    CHECK(srv["cache_ram_mib"] == 0);
    CHECK(srv["cache_idle_slots"] == false);  // nothing to move idle slots to
    CHECK(s.wait_log("--cache-idle-slots: nothing to do"));
}
