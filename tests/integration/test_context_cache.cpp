// Prompt caching against the real binary: a prompt that shares a prefix with a slot's cache
// evaluates only the rest (timings.prompt_n), gives the same greedy output as without the cache, and
// a prefix another slot holds is shared (seq_cp) rather than evaluated and stored again.
#include <catch2/catch.hpp>

#include "context_util.h"

using namespace ctxtest;
using server::http::Client;

namespace {

std::string shared_prefix() {
    std::string p;
    while (p.size() < 1200)
        p += "Lily and Ben lived in a small house near the woods. Every day they played outside. ";
    return p;
}

int n_tokens(uint16_t port, const std::string& text) {
    Client c("127.0.0.1", port);
    return (int)c.post("/tokenize", json{{"content", text}, {"add_special", true}}.dump())
        .json()["tokens"]
        .size();
}

}  // namespace

TEST_CASE("prompt reuse: the second of two prompts sharing a 400-token prefix evaluates fewer than 20 tokens",
          "[integration][context][prompt_cache]") {
    ServerProcess s({"-m", stories_model(), "-c", "2048", "-np", "1", "-t", "2"});
    const std::string prefix = shared_prefix();
    const std::string a = prefix + "One day Lily found a red ball.", b = prefix + "Then Ben saw a big dog.";
    REQUIRE(n_tokens(s.port(), prefix) >= 400);

    const json ra = complete(s.port(), a, 16);
    REQUIRE(ra["timings"]["prompt_n"] == n_tokens(s.port(), a));
    REQUIRE(ra["tokens_cached"] == 0);
    const json rb = complete(s.port(), b, 16);
    const int n_b = n_tokens(s.port(), b);
    REQUIRE(rb["timings"]["prompt_n"].get<int>() < 20);
    REQUIRE(rb["tokens_cached"].get<int>() + rb["timings"]["prompt_n"].get<int>() == n_b);
    REQUIRE(rb["tokens_evaluated"] == n_b);

    // Identical greedy output without the cache.
    const json rb_nocache = complete(s.port(), b, 16, {{"cache_prompt", false}});
    REQUIRE(rb_nocache["timings"]["prompt_n"] == n_b);
    REQUIRE(rb_nocache["tokens"] == rb["tokens"]);
    REQUIRE(rb_nocache["content"] == rb["content"]);
    // The same prompt again: only its last token is evaluated.
    const json rb_again = complete(s.port(), b, 16);
    REQUIRE(rb_again["timings"]["prompt_n"] == 1);
    REQUIRE(rb_again["tokens"] == rb["tokens"]);
    WARN("time to first token: " << ra["timings"]["ttft_ms"].get<double>() << " ms for the first prompt ("
                                 << ra["timings"]["prompt_n"] << " tokens evaluated), "
                                 << rb["timings"]["ttft_ms"].get<double>() << " ms for the second ("
                                 << rb["timings"]["prompt_n"] << " evaluated), "
                                 << rb_nocache["timings"]["ttft_ms"].get<double>()
                                 << " ms for it without the cache");
}

TEST_CASE("greedy outputs are identical with and without prompt caching across the reference prompts",
          "[integration][context][prompt_cache]") {
    ServerProcess s({"-m", stories_model(), "-c", "2048", "-np", "2", "-t", "2"});
    const json g = stories_golden();
    for (int round = 0; round < 2; ++round)
        for (const auto& c : g["cases"]) {
            const json r = complete(s.port(), c["prompt"], 96, {{"cache_prompt", round == 1}});
            REQUIRE(r["tokens"] == c["completion_tokens"]);
        }
}

TEST_CASE("a prefix held by another slot is shared through seq_cp, not evaluated and stored again",
          "[integration][context][prompt_cache]") {
    ServerProcess s({"-m", stories_model(), "-c", "2048", "-np", "2", "-t", "2", "--metrics"});
    const std::string prefix = shared_prefix();
    const std::string a = prefix + "One day Lily found a red ball.", b = prefix + "Then Ben saw a big dog.";
    const int n_a = n_tokens(s.port(), a), n_b = n_tokens(s.port(), b), n_prefix = n_tokens(s.port(), prefix);

    const json ra = complete(s.port(), a, 8, {{"id_slot", 0}});
    REQUIRE(ra["id_slot"] == 0);
    const json rb = complete(s.port(), b, 8, {{"id_slot", 1}});
    REQUIRE(rb["id_slot"] == 1);
    REQUIRE(rb["timings"]["prompt_n"].get<int>() < 20);
    // Both slots keep their sequences; the shared prefix occupies its cells once.
    const double used = metric(s.port(), "llamacpp:kv_cache_tokens");
    REQUIRE(used <= (n_a + 7) + (n_b + 7) - (n_prefix - 5));
    REQUIRE(used >= (n_a + 7));

    const json rb_fresh = complete(s.port(), b, 8, {{"cache_prompt", false}});
    REQUIRE(rb_fresh["tokens"] == rb["tokens"]);
}

TEST_CASE("quantized KV caches from the command line", "[integration][threads][context][cli]") {
    const std::string synth = shared_path("models/synth/synth-tiny-f16.gguf");
    auto run = [&](const std::string& model, const std::vector<std::string>& extra) {
        std::vector<std::string> args{"run", "-m", model, "-p", "Hello world", "-n", "8", "--temp", "0", "-c", "128",
                                      "--json"};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_cli(args);
    };
    const auto f16 = run(synth, {});
    REQUIRE(f16.status == 0);
    const auto q8 = run(synth, {"-fa", "on", "-ctk", "q8_0", "-ctv", "q8_0"});
    REQUIRE(q8.status == 0);
    REQUIRE(json::parse(q8.out)["completion_tokens"].size() == 8);
    // stories260K's 8-wide heads cannot hold 32-wide blocks: refused at startup, with the reason.
    const auto bad = run(stories_model(), {"-fa", "on", "-ctk", "q8_0"});
    REQUIRE(bad.status == 1);
    REQUIRE(bad.err.find("K head size 8") != std::string::npos);
    // A quantized V needs flash attention.
    const auto no_fa = run(synth, {"-ctv", "q4_0"});
    REQUIRE(no_fa.status == 2);
    REQUIRE(no_fa.err.find("requires flash attention") != std::string::npos);
}
