// Speculative decoding through the real server: every drafter leaves greedy output token-identical to
// the reference (one slot; four concurrent streams beside a long prefill), stop strings, JSON-schema
// grammars and seeded sampling unchanged, streamed text equal to non-streamed text, settings and counts
// visible in /props, /slots and /metrics, and bad settings refused.
#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

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

std::string draft_model() {
    return shared_path("models/stories260K-q8_0.gguf");
}

std::vector<std::string> spec_args(const std::string& type, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"-m", stories_model(), "-c", "2048", "-t", "2", "--metrics", "--spec-type", type};
    if (type.find("draft-simple") != std::string::npos) {
        a.push_back("-md");
        a.push_back(draft_model());
    }
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

double metric(const std::string& text, const std::string& name) {
    const auto at = text.find(name + " ");
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + name.size() + 1));
}

const char* const kDrafters[] = {"ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache",
                                 "draft-simple"};

}  // namespace

TEST_CASE("speculation: greedy output equals the reference with every drafter, streamed and not",
          "[integration][speculative]") {
    const json g = stories_golden();
    for (const char* type : kDrafters) {
        INFO("--spec-type " << type);
        ServerProcess s(spec_args(type));
        // The draft model is warmed up with the target (its first draft does not page its weights in).
        if (std::string(type) == "draft-simple")
            CHECK(s.log().find("(and the draft model)") != std::string::npos);
        int accepted = 0, drafted = 0;
        // Every case, then the first again: ngram-mod's 24-token keys find little inside one short
        // reply, but it remembers earlier requests.
        std::vector<json> cases(g["cases"].begin(), g["cases"].end());
        cases.push_back(g["cases"][0]);
        const auto run = [&](const json& c) {
            const json r = complete(s.port(), {{"prompt", c["prompt"]}, {"n_predict", 96}, {"temperature", 0}});
            REQUIRE(tokens_of(r) == c["completion_tokens"].get<std::vector<int>>());
            drafted += r["timings"]["draft_n"].get<int>();
            accepted += r["timings"]["draft_n_accepted"].get<int>();
        };
        for (const auto& c : cases) run(c);
        // Drafting is priced from measured step times: on a loaded machine a drafter may only have probed,
        // and missed, so far. The remembered reply again, a few times, until a draft of it is verified.
        for (int again = 0; again < 6 && accepted == 0; ++again) run(g["cases"][0]);
        // The drafts were really verified (stories260K repeats itself, and a request repeats: every
        // drafter finds something).
        REQUIRE(drafted > 0);
        REQUIRE(accepted > 0);
        REQUIRE(accepted <= drafted);
        const json body = {{"prompt", g["cases"][0]["prompt"]}, {"n_predict", 96}, {"temperature", 0}};
        const auto [text, toks] = stream(s.port(), body);
        const json whole = complete(s.port(), body);
        REQUIRE(text == whole["content"].get<std::string>());
        REQUIRE(toks == tokens_of(whole));
        // Visible in /metrics per drafter.
        Client c("127.0.0.1", s.port());
        const std::string m = c.get("/metrics").body;
        const std::string name = std::string(type);
        REQUIRE(metric(m, "ggserve:draft_accepted_total{drafter=\"" + name + "\"}") > 0);
    }
}

TEST_CASE("speculation: --spec-ngram-mod-n-match sets ngram-mod's key length", "[integration][speculative]") {
    // One pass over the goldens' prompts: 4-token keys find repeats inside the replies, the default 24-token
    // keys (almost) none; the tokens stay the reference's either way.
    const json g = stories_golden();
    auto accepted_in_one_pass = [&](std::vector<std::string> extra) {
        ServerProcess s(spec_args("ngram-mod", std::move(extra)));
        int accepted = 0;
        for (const auto& c : g["cases"]) {
            const json r = complete(s.port(), {{"prompt", c["prompt"]}, {"n_predict", 96}, {"temperature", 0}});
            REQUIRE(tokens_of(r) == c["completion_tokens"].get<std::vector<int>>());
            accepted += r["timings"]["draft_n_accepted"].get<int>();
        }
        return accepted;
    };
    const int short_keys = accepted_in_one_pass({"--spec-ngram-mod-n-match", "4"});
    const int default_keys = accepted_in_one_pass({});
    INFO("accepted: n-match 4 " << short_keys << ", default " << default_keys);
    REQUIRE(short_keys > 0);
    REQUIRE(short_keys > default_keys);
}

TEST_CASE("speculation: four concurrent streams and a long prefill keep the reference tokens",
          "[integration][speculative][batching]") {
    ServerProcess s(spec_args("ngram-map-k4v,ngram-mod,draft-simple",
                              {"-np", "4", "-b", "64", "-ub", "32", "-c", "4096", "--max-prefill-tokens", "16"}));
    const json g = stories_golden();
    std::string long_prompt;
    while (long_prompt.size() < 1000) long_prompt += "Tom and Sue went to the big park. They played with a red ball. ";
    std::promise<void> go_long;
    std::atomic<bool> fired{false};
    std::vector<std::future<std::vector<int>>> streams;
    for (int i = 0; i < 4; ++i)
        streams.push_back(std::async(std::launch::async, [&, i] {
            const json body = {{"prompt", g["cases"][i]["prompt"]}, {"n_predict", 96}, {"temperature", 0}};
            return stream(s.port(), body, [&](int ev) {
                       if (ev == 8 && !fired.exchange(true)) go_long.set_value();
                   }).second;
        }));
    go_long.get_future().wait();
    const json long_r = complete(s.port(), {{"prompt", long_prompt}, {"n_predict", 16}, {"temperature", 0}});
    REQUIRE(long_r["tokens"].size() == 16);
    int drafted = 0;
    for (int i = 0; i < 4; ++i) REQUIRE(streams[(size_t)i].get() == g["cases"][i]["completion_tokens"].get<std::vector<int>>());
    Client c("127.0.0.1", s.port());
    const std::string m = c.get("/metrics").body;
    for (const char* d : {"ngram-map-k4v", "ngram-mod", "draft-simple"})
        drafted += (int)metric(m, std::string("ggserve:draft_tokens_total{drafter=\"") + d + "\"}");
    REQUIRE(drafted > 0);
}

TEST_CASE("speculation: stop strings, JSON schemas and seeded sampling give what plain decoding gives",
          "[integration][speculative]") {
    ServerProcess plain({"-m", stories_model(), "-c", "2048", "-t", "2"});
    ServerProcess spec(spec_args("ngram-mod,ngram-simple"));
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
    };
    for (const json& b : bodies) {
        INFO(b.dump());
        const json want = complete(plain.port(), b);
        const json got = complete(spec.port(), b);
        REQUIRE(got["content"] == want["content"]);
        REQUIRE(got["tokens"] == want["tokens"]);
        REQUIRE(got["stop_type"] == want["stop_type"]);
    }
    // Turned off per request: no draft is evaluated.
    json off = bodies[0];
    off["speculative.n_max"] = 0;
    REQUIRE(complete(spec.port(), off)["timings"]["draft_n"] == 0);
    off.erase("speculative.n_max");
    off["speculative"] = false;
    REQUIRE(complete(spec.port(), off)["timings"]["draft_n"] == 0);
}

TEST_CASE("speculation: /props and /slots show the settings, bad request fields are 400s",
          "[integration][speculative]") {
    ServerProcess s(spec_args("ngram-cache,draft-simple",
                              {"--draft-max", "6", "--draft-p-min", "0.5", "--spec-ngram-mod-n-match", "12"}));
    Client c("127.0.0.1", s.port());
    const json props = json::parse(c.get("/props").body);
    REQUIRE(props["speculative"]["types"] == "ngram-cache,draft-simple");
    REQUIRE(props["speculative"]["n_max"] == 6);
    REQUIRE(props["speculative"]["p_min"].get<double>() == Approx(0.5));
    REQUIRE(props["speculative"]["ngram_mod_n_match"] == 12);
    REQUIRE(props["default_generation_settings"]["params"]["speculative.n_max"] == 6);
    const json slots = json::parse(c.get("/slots").body);
    REQUIRE(slots[0].contains("speculative_settings"));
    for (const json& bad : {json{{"prompt", "a"}, {"speculative.n_max", "many"}},
                            json{{"prompt", "a"}, {"speculative", {{"p_min", 2}}}},
                            json{{"prompt", "a"}, {"speculative", "yes"}},
                            json{{"prompt", "a"}, {"speculative.n_max", 2}, {"speculative.n_min", 5}}}) {
        INFO(bad.dump());
        const auto r = c.post("/completion", bad.dump());
        REQUIRE(r.status == 400);
        REQUIRE(json::parse(r.body)["error"]["message"].get<std::string>().find("speculative") != std::string::npos);
    }
    REQUIRE(c.get("/health").status == 200);
}

TEST_CASE("speculation: the n-gram drafters' size options cap each draft and show in /props",
          "[integration][speculative]") {
    const json g = stories_golden();
    // Longest draft per step of a drafter: its evaluated tokens over the steps that verified a draft, and
    // the largest draft of any one request (timings) as a bound check.
    auto run = [&](const std::string& type, std::vector<std::string> extra) {
        ServerProcess s(spec_args(type, std::move(extra)));
        for (int pass = 0; pass < 2; ++pass)
            for (const auto& c : g["cases"]) {
                const json r = complete(s.port(), {{"prompt", c["prompt"]}, {"n_predict", 96}, {"temperature", 0}});
                REQUIRE(tokens_of(r) == c["completion_tokens"].get<std::vector<int>>());
            }
        Client c("127.0.0.1", s.port());
        const std::string m = c.get("/metrics").body;
        const double tokens = metric(m, "ggserve:draft_tokens_total{drafter=\"" + type + "\"}");
        const double steps = metric(m, "ggserve:draft_steps_total{drafter=\"" + type + "\"}");
        REQUIRE(steps > 0);
        return std::make_pair(tokens / steps, json::parse(c.get("/props").body)["speculative"]);
    };
    const auto [free_len, free_props] = run("ngram-simple", {});
    const auto [capped_len, capped_props] = run("ngram-simple", {"--spec-ngram-simple-size-m", "2"});
    INFO("tokens per draft: default " << free_len << ", size-m 2 " << capped_len);
    REQUIRE(free_len > 2.0);
    REQUIRE(capped_len <= 2.0);
    REQUIRE(capped_props["ngram_sizes"]["ngram-simple"]["size_m"] == 2);
    // ngram-mod's n-min: no draft shorter than 3 tokens is verified.
    const auto [mod_len, mod_props] =
        run("ngram-mod", {"--spec-ngram-mod-n-match", "4", "--spec-ngram-mod-n-min", "3", "--spec-ngram-mod-n-max", "5"});
    REQUIRE(mod_len >= 3.0);
    REQUIRE(mod_len <= 5.0);
    REQUIRE(mod_props["ngram_mod_n_min"] == 3);
    REQUIRE(mod_props["ngram_mod_n_max"] == 5);
    // The unprefixed pair fills in where a drafter's own option is not given; the key length takes effect.
    const auto [k_len, k_props] = run("ngram-map-k", {"--spec-ngram-size-n", "2", "--spec-ngram-size-m", "3",
                                                       "--spec-ngram-map-k4v-size-n", "4"});
    REQUIRE(k_len <= 3.0);
    REQUIRE(k_props["ngram_sizes"]["ngram-map-k"] == json{{"size_n", 2}, {"size_m", 3}, {"min_hits", 0}});
    REQUIRE(k_props["ngram_sizes"]["ngram-simple"] == json{{"size_n", 2}, {"size_m", 3}, {"min_hits", 0}});
    REQUIRE(k_props["ngram_sizes"]["ngram-map-k4v"] == json{{"size_n", 4}, {"size_m", 3}, {"min_hits", 0}});
    // min-hits: a key must have occurred that often before it drafts. No key of these replies occurs 1000
    // times, so that server never drafts while the default one does. (A moderate value only drafts less,
    // and how much less depends on the adaptive controllers' timing: the unit tests check it exactly.)
    ServerProcess dflt(spec_args("ngram-map-k"));
    ServerProcess strict(spec_args("ngram-map-k", {"--spec-ngram-min-hits", "1000", "--spec-ngram-map-k4v-min-hits", "2"}));
    int drafted_default = 0, drafted_strict = 0;
    for (const auto& c : g["cases"]) {
        const json body = {{"prompt", c["prompt"]}, {"n_predict", 96}, {"temperature", 0}};
        const json a = complete(dflt.port(), body), b = complete(strict.port(), body);
        REQUIRE(tokens_of(b) == c["completion_tokens"].get<std::vector<int>>());
        drafted_default += a["timings"]["draft_n"].get<int>();
        drafted_strict += b["timings"]["draft_n"].get<int>();
    }
    INFO("drafted: default " << drafted_default << ", min-hits 1000 " << drafted_strict);
    REQUIRE(drafted_default > 0);
    REQUIRE(drafted_strict == 0);
    const json sp = json::parse(Client("127.0.0.1", strict.port()).get("/props").body)["speculative"]["ngram_sizes"];
    REQUIRE(sp["ngram-map-k"]["min_hits"] == 1000);
    REQUIRE(sp["ngram-map-k4v"]["min_hits"] == 2);
}

TEST_CASE("speculation: bad server settings are clear startup errors", "[integration][speculative]") {
    const std::string m = stories_model();
    struct Case {
        std::string args, message;
        int code;
    };
    const std::vector<Case> cases = {
        {"--spec-type ngram-mod --draft-max 0", "--draft-max must be positive", 2},
        {"--spec-type ngram-mod --spec-ngram-mod-n-match 0", "--spec-ngram-mod-n-match must be in [1, 1024]", 2},
        {"--spec-type ngram-simple --spec-ngram-simple-size-n 65", "--spec-ngram-simple-size-n must be in [1, 64]", 2},
        {"--spec-type ngram-map-k --spec-ngram-size-m -1", "-size-m must be in [1, 1024]", 2},
        {"--spec-type ngram-mod --spec-ngram-mod-n-min 6 --spec-ngram-mod-n-max 5", "n-min <= n-max", 2},
        {"--spec-type ngram-simple --spec-ngram-min-hits -1", "-min-hits must be in [1, 1000000]", 2},
        {"--spec-type ngram-mod --draft-max -4", "--draft-max must be positive", 2},
        {"--spec-type ngram-mod,eagle3", "unknown speculative type 'eagle3'", 2},
        {"--spec-type draft-simple", "needs a draft model", 2},
        {"--spec-type ngram-mod --draft-min 20 --draft-max 4", "--draft-min", 2},
        {"-md " + shared_path("models/synth/synth-tiny-q8_0.gguf"), "cannot draft for the target", 1},
        {"-md /nonexistent/draft.gguf", "cannot load the draft model", 1},
        {"--spec-type ngram-cache --lookup-cache-static /nonexistent/static.bin", "cannot open n-gram cache", 1},
    };
    for (const Case& k : cases) {
        INFO(k.args);
        const CliResult r = run_ggserve("serve --port 0 -m " + m + " " + k.args);
        INFO(r.output);
        REQUIRE(r.code == k.code);
        REQUIRE(r.output.find(k.message) != std::string::npos);
    }
}

TEST_CASE("speculation on a synthetic model: four concurrent greedy streams equal plain decoding",
          "[integration][threads][speculative]") {
    const std::string model = shared_path("models/synth/synth-tiny-q8_0.gguf");
    ServerProcess s({"-m", model, "-np", "4", "-c", "2048", "-t", "2", "-b", "64", "-ub", "32", "--spec-type",
                     "ngram-mod,ngram-map-k,draft-simple", "-md", shared_path("models/synth/synth-tiny-q4_0.gguf")});
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
    std::vector<std::future<json>> futs;
    for (int i = 0; i < 4; ++i)
        futs.push_back(std::async(std::launch::async, [&, i] {
            return complete(s.port(), {{"prompt", g["cases"][i % g["cases"].size()]["prompt"]},
                                       {"n_predict", 48},
                                       {"temperature", 0}});
        }));
    int drafted = 0;
    for (int i = 0; i < 4; ++i) {
        const json r = futs[(size_t)i].get();
        REQUIRE(tokens_of(r) == plain[(size_t)i]);
        drafted += r["timings"]["draft_n"].get<int>();
    }
    REQUIRE(drafted > 0);
}

TEST_CASE(
    "speculation on every synthetic golden model: greedy output equals plain decoding with a draft model "
    "and ngram-mod, alone and beside other streams and a long prefill",
    "[integration][speculative]") {
    // Every architecture of ../shared/golden and the weight types. The draft model is the target itself
    // (its drafts are the target's own greedy tokens, so verification accepts them), ngram-mod drafts a
    // reply it has seen before.
    for (const std::string& name : completion_util::synth_golden_models()) {
        INFO(name);
        const std::string model = shared_path("models/synth/" + name + ".gguf");
        std::ifstream f(shared_path("golden/" + name + ".greedy.json"));
        const json g = json::parse(f);
        for (const char* type : {"draft-simple", "ngram-mod"}) {
            INFO("--spec-type " << type);
            std::vector<std::string> args = {
                "-m", model, "-np", "4", "-c", "4096", "-t", "2", "--spec-type", type, "--draft-p-min", "0"};
            if (std::string(type) == "draft-simple") args.insert(args.end(), {"-md", model});
            ServerProcess s(args);
            const auto body = [&](int i, bool spec) {
                json b = {{"prompt", g["cases"][(size_t)i]["prompt"]}, {"n_predict", 40}, {"temperature", 0}};
                if (!spec) b["speculative"] = false;
                return b;
            };
            std::vector<std::vector<int>> plain;
            for (int i = 0; i < 4; ++i) plain.push_back(tokens_of(complete(s.port(), body(i, false))));
            int accepted = 0;
            // Drafting is priced from measured step times: a drafter may only probe at first. Every prompt
            // twice, then the first again until a draft of it has been verified.
            for (int k = 0; k < 8 || (k < 14 && accepted == 0); ++k) {
                const int i = k < 8 ? k % 4 : 0;
                const json r = complete(s.port(), body(i, true));
                REQUIRE(tokens_of(r) == plain[(size_t)i]);
                accepted += r["timings"]["draft_n_accepted"].get<int>();
            }
            REQUIRE(accepted > 0);
            // Four at once, three speculating, beside a long prompt being prefilled.
            std::vector<json> bodies;
            for (int i = 0; i < 4; ++i) bodies.push_back(body(i, i != 3));
            const std::vector<json> got = completion_util::beside_long_prefill(s.port(), bodies, g);
            for (int i = 0; i < 4; ++i) REQUIRE(tokens_of(got[(size_t)i]) == plain[(size_t)i]);
            REQUIRE(got[4]["timings"]["prompt_n"].get<int>() > 100);
        }
    }
}

TEST_CASE("speculation: --spec-default is ngram-mod, a later --spec-type wins", "[integration][speculative]") {
    const json g = stories_golden();
    {
        ServerProcess s({"-m", stories_model(), "-c", "2048", "-t", "1", "--spec-default"});
        Client c("127.0.0.1", s.port());
        CHECK(json::parse(c.get("/props").body)["speculative"]["types"] == "ngram-mod");
        const auto& cs = g["cases"][0];
        const json r = complete(s.port(), {{"prompt", cs["prompt"]}, {"n_predict", 96}, {"temperature", 0}});
        CHECK(tokens_of(r) == cs["completion_tokens"].get<std::vector<int>>());
    }
    ServerProcess later({"-m", stories_model(), "-c", "512", "-t", "1", "--spec-default", "--spec-type", "ngram-simple"});
    CHECK(json::parse(Client("127.0.0.1", later.port()).get("/props").body)["speculative"]["types"] == "ngram-simple");
    ServerProcess env({"-m", stories_model(), "-c", "512", "-t", "1"}, std::chrono::seconds(60),
                      ServerProcess::WaitFor::Ready, {"LLAMA_ARG_SPEC_DEFAULT=1"});
    CHECK(json::parse(Client("127.0.0.1", env.port()).get("/props").body)["speculative"]["types"] == "ngram-mod");
}
