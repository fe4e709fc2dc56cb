// Lookahead decoding through the real server: greedy output token-identical to the goldens and to plain
// decoding (adaptive and fixed full windows, several W/N/G shapes, one slot and four concurrent streams
// with and without lookahead beside a long prefill, a synthetic model), seeded sampling, stop strings and
// grammars unchanged, streamed text equal to non-streamed text, counts in /slots and /metrics, and bad
// settings refused with clear errors.
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli_process.h"
#include "completion_util.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;
using completion_util::complete;
using completion_util::stream;
using completion_util::tokens_of;

namespace {

std::vector<std::string> la_args(std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"-m", stories_model(), "-c", "2048", "-t", "2", "--metrics", "--spec-type",
                                  "lookahead"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

// The value of a metric line "name value" (-1 when absent; "# HELP name" lines are not it).
double metric(const std::string& text, const std::string& name) {
    const auto at = text.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + name.size() + 2));
}

json fixed(int w, int n, int g) {
    return json{{"w", w}, {"n", n}, {"g", g}, {"fixed", true}};
}

}  // namespace

TEST_CASE("lookahead: greedy output equals the stories260K goldens, adaptive and with fixed windows",
          "[integration][lookahead]") {
    const json g = stories_golden();
    ServerProcess s(la_args());
    // Each shape: the server's default (adaptive), the full W15 N5 G15 every step, and smaller ones
    // (N = 2: one level; a single column; more branches than columns).
    const std::vector<json> shapes = {nullptr, fixed(15, 5, 15), fixed(4, 3, 2), fixed(6, 2, 6), fixed(1, 4, 8)};
    for (const json& shape : shapes) {
        INFO("lookahead " << shape.dump());
        int64_t evaluated = 0, accepted = 0;
        for (const auto& c : g["cases"]) {
            json body = {{"prompt", c["prompt"]}, {"n_predict", 96}, {"temperature", 0}};
            if (!shape.is_null()) body["lookahead"] = shape;
            const json r = complete(s.port(), body);
            REQUIRE(tokens_of(r) == c["completion_tokens"].get<std::vector<int>>());
            evaluated += r["timings"]["draft_n"].get<int>();
            accepted += r["timings"]["draft_n_accepted"].get<int>();
        }
        REQUIRE(accepted <= evaluated);
        if (!shape.is_null()) {
            // A fixed window runs on every step, and stories260K repeats itself enough for its
            // branches to be accepted.
            REQUIRE(evaluated > 6 * 40);
            REQUIRE(accepted > 0);
        }
    }
    Client c("127.0.0.1", s.port());
    const std::string m = c.get("/metrics").body;
    REQUIRE(metric(m, "ggserve:draft_accepted_total{drafter=\"lookahead\"}") > 0);
    REQUIRE(metric(m, "ggserve:lookahead_accepted_per_step") > 0);
    REQUIRE(metric(m, "ggserve:lookahead_evaluated_per_accepted") > 1);
    REQUIRE(metric(m, "ggserve:lookahead_pool_ngrams") == 0);  // no request running now
}

TEST_CASE(
    "lookahead: a slot's pool remembers its earlier replies, so a repeated request is drafted from them",
    "[integration][lookahead]") {
    const json g = stories_golden();
    ServerProcess s(la_args({"-np", "1"}));
    // Fixed windows: every step verifies branches, so what is accepted depends on the pool alone.
    const json body = {{"prompt", g["cases"][1]["prompt"]},
                       {"n_predict", 96},
                       {"temperature", 0},
                       {"lookahead", fixed(4, 5, 4)}};
    const json first = complete(s.port(), body);
    // A different request in between: the pool keeps both.
    const json other = complete(s.port(), {{"prompt", g["cases"][3]["prompt"]},
                                           {"n_predict", 32},
                                           {"temperature", 0},
                                           {"lookahead", fixed(4, 5, 4)}});
    REQUIRE(tokens_of(other) == std::vector<int>(g["cases"][3]["completion_tokens"].begin(),
                                                 g["cases"][3]["completion_tokens"].begin() + 32));
    const json again = complete(s.port(), body);
    const std::vector<int> want = g["cases"][1]["completion_tokens"].get<std::vector<int>>();
    REQUIRE(tokens_of(first) == want);
    REQUIRE(tokens_of(again) == want);
    const int a1 = first["timings"]["draft_n_accepted"].get<int>();
    const int a2 = again["timings"]["draft_n_accepted"].get<int>();
    INFO("accepted: first " << a1 << ", again " << a2);
    // Branches of N - 1 = 4 tokens: with the reply in the pool most steps accept a whole one.
    REQUIRE(a2 >= 60);
    REQUIRE(a2 > 2 * a1);
}

TEST_CASE("lookahead: streamed text equals non-streamed text, /slots shows the window while it runs",
          "[integration][lookahead]") {
    ServerProcess s(la_args());
    const json g = stories_golden();
    for (const json& shape : {json(nullptr), fixed(15, 5, 15), fixed(5, 3, 4)}) {
        INFO("lookahead " << shape.dump());
        for (int i : {0, 2, 5}) {
            json body = {{"prompt", g["cases"][i]["prompt"]}, {"n_predict", 96}, {"temperature", 0}};
            if (!shape.is_null()) body["lookahead"] = shape;
            json seen_slot;
            const auto [text, toks] = stream(s.port(), body, [&](int ev) {
                if (ev != 10 || shape.is_null()) return;  // this callback runs on the test's thread
                Client c("127.0.0.1", s.port());
                for (const json& slot : json::parse(c.get("/slots").body))
                    if (slot["is_processing"].get<bool>()) seen_slot = slot;
            });
            const json whole = complete(s.port(), body);
            REQUIRE(text == whole["content"].get<std::string>());
            REQUIRE(toks == tokens_of(whole));
            REQUIRE(toks == g["cases"][i]["completion_tokens"].get<std::vector<int>>());
            if (!shape.is_null()) {
                INFO(seen_slot.dump());
                REQUIRE(seen_slot["lookahead"]["w"] == shape["w"]);
                REQUIRE(seen_slot["lookahead"]["n"] == shape["n"]);
                REQUIRE(seen_slot["lookahead"]["g"] == shape["g"]);
                REQUIRE(seen_slot["lookahead"]["fixed"] == true);
                REQUIRE(seen_slot["lookahead"]["steps"].get<int>() > 0);
                REQUIRE(seen_slot["lookahead"]["pool_size"].get<int>() > 0);
                REQUIRE(seen_slot["lookahead"]["evaluated"].get<int>() >= seen_slot["lookahead"]["steps"].get<int>());
            }
        }
    }
    Client c("127.0.0.1", s.port());
    const json props = json::parse(c.get("/props").body);
    REQUIRE(props["speculative"]["types"] == "lookahead");
    REQUIRE(props["speculative"]["lookahead"]["w"] == 15);
    REQUIRE(props["speculative"]["lookahead"]["n"] == 5);
    REQUIRE(props["speculative"]["lookahead"]["g"] == 15);
    REQUIRE(props["speculative"]["lookahead"]["fixed"] == false);
    // Idle slots run no lookahead.
    REQUIRE(json::parse(c.get("/slots").body)[0]["lookahead"].is_null());
}

TEST_CASE(
    "lookahead: four concurrent streams, with and without lookahead, beside a long prefill keep the "
    "reference tokens",
    "[integration][threads][lookahead][batching]") {
    // n_batch 64 holds one full step of W 6, N 4, G 6 (36 tokens) but not four: crowded steps shrink.
    ServerProcess s(la_args({"-np", "4", "-b", "64", "-ub", "32", "-c", "4096", "--max-prefill-tokens", "16",
                             "--lookahead-w", "6", "--lookahead-n", "4", "--lookahead-g", "6"}));
    const json g = stories_golden();
    std::string long_prompt;
    while (long_prompt.size() < 1000) long_prompt += "Tom and Sue went to the big park. They played with a red ball. ";
    std::promise<void> go_long;
    std::atomic<bool> fired{false};
    std::vector<std::future<std::vector<int>>> streams;
    for (int i = 0; i < 4; ++i)
        streams.push_back(std::async(std::launch::async, [&, i] {
            json body = {{"prompt", g["cases"][i]["prompt"]}, {"n_predict", 96}, {"temperature", 0}};
            if (i < 2) body["lookahead"] = fixed(6, 4, 6);  // every step a full window (shrunk when crowded)
            if (i == 3) body["speculative"] = false;          // plain decoding beside them
            return stream(s.port(), body, [&](int ev) {
                       if (ev == 8 && !fired.exchange(true)) go_long.set_value();
                   }).second;
        }));
    go_long.get_future().wait();
    const json long_r = complete(s.port(), {{"prompt", long_prompt}, {"n_predict", 16}, {"temperature", 0}});
    REQUIRE(long_r["tokens"].size() == 16);
    for (int i = 0; i < 4; ++i)
        REQUIRE(streams[(size_t)i].get() == g["cases"][i]["completion_tokens"].get<std::vector<int>>());
    Client c("127.0.0.1", s.port());
    const std::string m = c.get("/metrics").body;
    REQUIRE(metric(m, "ggserve:draft_tokens_total{drafter=\"lookahead\"}") > 0);
    REQUIRE(metric(m, "ggserve:draft_accepted_total{drafter=\"lookahead\"}") > 0);
    // The long prompt was prefilled while the streams generated.
    REQUIRE(metric(m, "ggserve:mixed_iterations_total") > 0);
}

TEST_CASE("lookahead: seeded sampling, stop strings and JSON schemas give what plain decoding gives",
          "[integration][lookahead]") {
    ServerProcess plain({"-m", stories_model(), "-c", "2048", "-t", "2"});
    ServerProcess la(la_args());
    const json g = stories_golden();
    const std::string prompt = g["cases"][1]["prompt"];
    const std::vector<json> bodies = {
        {{"prompt", prompt}, {"n_predict", 96}, {"temperature", 0}, {"stop", {"park", "said"}}},
        {{"prompt", prompt},
         {"n_predict", 64},
         {"temperature", 0},
         {"json_schema",
          {{"type", "object"},
           {"properties", {{"name", {{"type", "string"}}}, {"age", {{"type", "integer"}}}}},
           {"required", {"name", "age"}}}}},
        {{"prompt", prompt}, {"n_predict", 96}, {"temperature", 0.9}, {"seed", 42}},
        {{"prompt", prompt}, {"n_predict", 96}, {"temperature", 0.7}, {"top_k", 5}, {"seed", 7},
         {"repeat_penalty", 1.1}},
        {{"prompt", g["cases"][5]["prompt"]}, {"n_predict", 96}, {"temperature", 1.0}, {"seed", 3}},
    };
    int64_t sampled_accepted = 0;
    for (const json& b : bodies) {
        const json want = complete(plain.port(), b);
        for (const json& shape : {json(nullptr), fixed(15, 5, 15), fixed(3, 3, 6)}) {
            json body = b;
            if (!shape.is_null()) body["lookahead"] = shape;
            INFO(body.dump());
            const json got = complete(la.port(), body);
            REQUIRE(got["content"] == want["content"]);
            REQUIRE(got["tokens"] == want["tokens"]);
            REQUIRE(got["stop_type"] == want["stop_type"]);
            if (b["temperature"].get<double>() > 0 && !shape.is_null())
                sampled_accepted += got["timings"]["draft_n_accepted"].get<int>();
        }
    }
    // Sampling requests really ran lookahead steps and accepted branch tokens (exact verification, not a
    // fallback to plain decoding).
    REQUIRE(sampled_accepted > 0);
    // Turned off per request: no lookahead token is evaluated.
    json off = bodies[0];
    off["lookahead"] = fixed(15, 5, 15);
    off["speculative"] = false;
    REQUIRE(complete(la.port(), off)["timings"]["draft_n"] == 0);
}

TEST_CASE("lookahead on a synthetic model: greedy streams equal plain decoding, alone and four at once",
          "[integration][lookahead]") {
    const std::string model = shared_path("models/synth/synth-tiny-q8_0.gguf");
    ServerProcess s({"-m", model, "-np", "4", "-c", "2048", "-t", "2", "-b", "256", "--spec-type", "lookahead",
                     "--lookahead-w", "8", "--lookahead-n", "4", "--lookahead-g", "8"});
    std::ifstream f(shared_path("golden/synth-tiny-q8_0.greedy.json"));
    const json g = json::parse(f);
    std::vector<std::vector<int>> plain;
    for (int i = 0; i < 4; ++i) {
        const json r = complete(s.port(), {{"prompt", g["cases"][i % g["cases"].size()]["prompt"]},
                                           {"n_predict", 48},
                                           {"temperature", 0},
                                           {"speculative", false}});
        REQUIRE(r["timings"]["draft_n"] == 0);
        plain.push_back(tokens_of(r));
    }
    for (int i = 0; i < 4; ++i) {
        const json r = complete(s.port(), {{"prompt", g["cases"][i % g["cases"].size()]["prompt"]},
                                           {"n_predict", 48},
                                           {"temperature", 0},
                                           {"lookahead", fixed(8, 4, 8)}});
        REQUIRE(tokens_of(r) == plain[(size_t)i]);
        REQUIRE(r["timings"]["draft_n"].get<int>() > 0);
    }
    std::vector<std::future<json>> futs;
    for (int i = 0; i < 4; ++i)
        futs.push_back(std::async(std::launch::async, [&, i] {
            json body = {{"prompt", g["cases"][i % g["cases"].size()]["prompt"]}, {"n_predict", 48}, {"temperature", 0}};
            if (i % 2 == 0) body["lookahead"] = fixed(8, 4, 8);
            return complete(s.port(), body);
        }));
    for (int i = 0; i < 4; ++i) REQUIRE(tokens_of(futs[(size_t)i].get()) == plain[(size_t)i]);
}

TEST_CASE(
    "lookahead on every synthetic golden model: greedy output equals plain decoding, alone and beside "
    "other streams and a long prefill",
    "[integration][lookahead]") {
    // Every architecture of ../shared/golden (sliding windows, soft-capping, expert routing, fused
    // projections, every RoPE variant) and the weight types: the window's lanes and the branches' cells
    // must leave the slot's own sequence exactly as plain decoding leaves it.
    for (const std::string& name : completion_util::synth_golden_models()) {
        INFO(name);
        std::ifstream f(shared_path("golden/" + name + ".greedy.json"));
        const json g = json::parse(f);
        ServerProcess s({"-m", shared_path("models/synth/" + name + ".gguf"), "-np", "4", "-c", "4096", "-t",
                         "2", "--spec-type", "lookahead"});
        const auto body = [&](int i, bool lookahead) {
            json b = {{"prompt", g["cases"][(size_t)i]["prompt"]}, {"n_predict", 40}, {"temperature", 0}};
            if (lookahead)
                b["lookahead"] = fixed(4, 4, 4);
            else
                b["speculative"] = false;
            return b;
        };
        std::vector<std::vector<int>> plain;
        for (int i = 0; i < 4; ++i) plain.push_back(tokens_of(complete(s.port(), body(i, false))));
        int accepted = 0;
        for (int round = 0; round < 2; ++round)  // the second time from the slot's pool: branches accepted
            for (int i = 0; i < 4; ++i) {
                const json r = complete(s.port(), body(i, true));
                REQUIRE(tokens_of(r) == plain[(size_t)i]);
                REQUIRE(r["timings"]["draft_n"].get<int>() > 0);
                accepted += r["timings"]["draft_n_accepted"].get<int>();
            }
        REQUIRE(accepted > 0);
        // Four at once, two with lookahead, beside a long prompt being prefilled.
        std::vector<json> bodies;
        for (int i = 0; i < 4; ++i) bodies.push_back(body(i, i % 2 == 0));
        const std::vector<json> got = completion_util::beside_long_prefill(s.port(), bodies, g);
        for (int i = 0; i < 4; ++i) REQUIRE(tokens_of(got[(size_t)i]) == plain[(size_t)i]);
        REQUIRE(got[4]["timings"]["prompt_n"].get<int>() > 100);
    }
}

TEST_CASE("lookahead: the default window shrinks to fit a small batch and still gives the goldens",
          "[integration][lookahead]") {
    // (15 + 15) * (5 - 1) = 120 tokens do not fit -b 64: W and G come down to 8 each (64 tokens).
    ServerProcess s(la_args({"-np", "2", "-b", "64", "-ub", "32"}));
    REQUIRE(
        s.log().find(
            "lookahead: the default W 15, G 15 lowered to W 8, G 8 to fit n_batch 64, a slot's context") !=
        std::string::npos);
    REQUIRE(s.log().find("lookahead: W 8, N 5, G 8, adaptive") != std::string::npos);
    const json g = stories_golden();
    for (const auto& c : g["cases"]) {
        const json r = complete(s.port(), {{"prompt", c["prompt"]},
                                           {"n_predict", c["completion_tokens"].size()},
                                           {"temperature", 0},
                                           {"lookahead", fixed(8, 5, 8)}});
        REQUIRE(tokens_of(r) == c["completion_tokens"].get<std::vector<int>>());
    }
    Client c("127.0.0.1", s.port());
    REQUIRE(metric(c.get("/metrics").body, "ggserve:draft_tokens_total{drafter=\"lookahead\"}") > 0);
}

TEST_CASE("lookahead: bad settings are clear startup errors and 400s", "[integration][lookahead]") {
    const std::string m = stories_model();
    struct Case {
        std::string args, message;
        int code;
    };
    const std::vector<Case> cases = {
        {"--spec-type lookahead --lookahead-w 0", "lookahead W (window columns) must be in [1, 64]", 2},
        {"--spec-type lookahead --lookahead-n 1", "lookahead N (n-gram size) must be in [2, 16]", 2},
        {"--spec-type lookahead --lookahead-n 0", "lookahead N (n-gram size) must be in [2, 16]", 2},
        {"--spec-type lookahead --lookahead-g 0", "lookahead G (verification branches) must be in [1, 64]",
         2},
        {"--spec-type lookahead --lookahead-w 100", "lookahead W (window columns) must be in [1, 64]", 2},
        {"--spec-type lookahead --lookahead-w 16 -b 64", "does not fit the batch (n_batch 64)", 2},
        {"--spec-type lookahead --lookahead-w 14 -c 128 -np 8",
         "more than a slot's context (16 tokens) allows", 2},
        {"--spec-type lookahead -b 4", "does not fit the batch (n_batch 4)", 2},
        {"--spec-type lookahead --lookahead-w 64 --lookahead-g 64 --lookahead-n 2 -np 130 -c 16640 -b 512",
         "sequence ids", 2},
        {"--spec-type lookahead,lookahead", "listed twice", 2},
    };
    for (const Case& k : cases) {
        INFO(k.args);
        const CliResult r = run_ggserve("serve --port 0 -m " + m + " " + k.args);
        INFO(r.output);
        REQUIRE(r.code == k.code);
        REQUIRE(r.output.find(k.message) != std::string::npos);
    }

    // n_batch 128, one slot: 30 lanes (W + G of the server's settings).
    ServerProcess s(la_args({"-np", "1", "-b", "128", "--lookahead-w", "15", "--lookahead-g", "15", "--lookahead-n", "5"}));
    Client c("127.0.0.1", s.port());
    const std::vector<std::pair<json, std::string>> bad = {
        {{{"w", 0}}, "lookahead W"},
        {{{"n", 1}}, "lookahead N"},
        {{{"g", 0}}, "lookahead G"},
        {{{"w", -2}}, "lookahead W"},
        {{{"w", "wide"}}, "'lookahead.w' must be an integer"},
        {{{"fixed", "yes"}}, "'lookahead.fixed' must be a boolean"},
        {{{"width", 3}}, "'lookahead.width' is not a lookahead setting"},
        {json::array({1, 2}), "'lookahead' must be an object"},
        {{{"w", 40}, {"n", 5}, {"g", 1}}, "does not fit the batch (n_batch 128)"},
        {{{"w", 20}, {"n", 3}, {"g", 20}}, "the server has 30 to spare"},
        {{{"w", 60}, {"n", 16}, {"g", 60}, {"fixed", true}}, "is more than a request may ask for (256)"},
    };
    for (const auto& [la, message] : bad) {
        INFO(la.dump());
        const auto r = c.post("/completion", json{{"prompt", "Once upon a time"}, {"n_predict", 8}, {"lookahead", la}}.dump());
        INFO(r.body);
        REQUIRE(r.status == 400);
        REQUIRE(json::parse(r.body)["error"]["message"].get<std::string>().find(message) != std::string::npos);
    }
    // The server goes on serving.
    const json ok = complete(s.port(), {{"prompt", "Once upon a time"}, {"n_predict", 8}, {"lookahead", fixed(4, 3, 4)}});
    REQUIRE(ok["tokens"].size() == 8);
    REQUIRE(c.get("/health").status == 200);
}

TEST_CASE("lookahead: near the end of the context and across context shifts, output equals plain decoding",
          "[integration][lookahead][context]") {
    // A slot of 128 tokens: 300 generated tokens shift the context twice or more; the window must stay
    // within the slot's share and its lanes must be gone before a shift moves the slot's cells.
    ServerProcess plain({"-m", stories_model(), "-c", "128", "-np", "1", "-t", "2", "--keep", "4", "--context-shift"});
    ServerProcess la({"-m", stories_model(), "-c", "128", "-np", "1", "-t", "2", "--keep", "4", "--context-shift", "--spec-type",
                      "lookahead", "--lookahead-w", "6", "--lookahead-n", "4", "--lookahead-g", "6"});
    const json g = stories_golden();
    for (int i : {1, 3}) {
        const json body = {{"prompt", g["cases"][i]["prompt"]}, {"n_predict", 300}, {"temperature", 0},
                           {"ignore_eos", true}};
        const json want = complete(plain.port(), body);
        REQUIRE(want["tokens"].size() == 300);
        for (const json& shape : {json(nullptr), fixed(6, 4, 6), fixed(2, 2, 6)}) {
            json b = body;
            if (!shape.is_null()) b["lookahead"] = shape;
            INFO(b.dump());
            const json got = complete(la.port(), b);
            REQUIRE(got["tokens"] == want["tokens"]);
            if (!shape.is_null()) REQUIRE(got["timings"]["draft_n"].get<int>() > 0);
        }
    }
    Client c("127.0.0.1", la.port());
    REQUIRE(c.get("/health").status == 200);
}
