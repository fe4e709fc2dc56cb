// Response shapes: per endpoint, the keys llama-server's documentation shows are present with the same
// JSON types (fixtures/llama_server_shapes.json), streamed and not; and the request fields of
// llama-server that ggserve once accepted and ignored either work or are a 400 naming the field.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "context_util.h"
#include "server/http/client.h"
#include "server_process.h"

namespace {

using json = nlohmann::json;
using server::http::Client;

const json& fixture() {
    static const json f = [] {
        std::ifstream in(std::string(GGSERVE_SOURCE_DIR) +
                         "/tests/integration/fixtures/llama_server_shapes.json");
        return json::parse(in);
    }();
    return f;
}

bool has_type(const json& v, const std::string& types) {
    size_t start = 0;
    for (;;) {
        const size_t bar = types.find('|', start);
        const std::string t = types.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
        if ((t == "string" && v.is_string()) || (t == "integer" && v.is_number_integer()) ||
            (t == "number" && v.is_number()) || (t == "boolean" && v.is_boolean()) ||
            (t == "null" && v.is_null()) || (t == "object" && v.is_object()) ||
            (t == "array" && v.is_array()))
            return true;
        if (bar == std::string::npos) return false;
        start = bar + 1;
    }
}

void check_shape(const json& v, const json& shape, const std::string& where,
                 std::vector<std::string>& errors) {
    if (shape.is_string()) {
        const std::string s = shape.get<std::string>();
        if (s[0] == '$') return check_shape(v, fixture()["$defs"][s.substr(1)], where, errors);
        if (!has_type(v, s)) errors.push_back(where + ": expected " + s + ", got " + v.dump().substr(0, 80));
        return;
    }
    if (shape.is_array()) {
        if (!v.is_array()) {
            errors.push_back(where + ": expected an array, got " + v.dump().substr(0, 80));
            return;
        }
        for (size_t i = 0; i < v.size(); ++i)
            check_shape(v[i], shape[0], where + "[" + std::to_string(i) + "]", errors);
        return;
    }
    if (!v.is_object()) {
        errors.push_back(where + ": expected an object, got " + v.dump().substr(0, 80));
        return;
    }
    for (const auto& [key, sub] : shape.items()) {
        if (!v.contains(key)) {
            errors.push_back(where + "." + key + ": missing");
            continue;
        }
        check_shape(v[key], sub, where + "." + key, errors);
    }
}

// Checks `v` against the fixture's shape of `endpoint`.
void require_shape(const json& v, const std::string& endpoint) {
    REQUIRE(fixture()["endpoints"].contains(endpoint));
    std::vector<std::string> errors;
    check_shape(v, fixture()["endpoints"][endpoint], endpoint, errors);
    std::string all;
    for (const auto& e : errors) all += e + "\n";
    INFO(v.dump().substr(0, 2000));
    INFO(all);
    CHECK(errors.empty());
}

using ctxtest::stream_events;

ServerProcess& shape_server() {
    static ctxtest::TempDir dir;
    static ServerProcess s({"-m", stories_model(), "-np", "2", "-c", "1024", "-t", "1", "--slot-save-path",
                            dir.file("slots"), "--metrics"});
    return s;
}

const json kChat = json::parse(
    R"({"messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 8, "temperature": 0})");

}  // namespace

TEST_CASE("shapes: /health, /v1/models, /props, /slots, tokenizer endpoints, errors",
          "[integration][shapes]") {
    Client c("127.0.0.1", shape_server().port());
    require_shape(c.get("/health").json(), "GET /health");
    require_shape(c.get("/v1/models").json(), "GET /v1/models");
    require_shape(c.get("/models").json(), "GET /v1/models");
    require_shape(c.get("/props").json(), "GET /props");
    const json slots = c.get("/slots").json();
    REQUIRE(slots.size() == 2);
    require_shape(slots, "GET /slots");
    require_shape(c.post("/tokenize", R"({"content": "Hello world"})").json(), "POST /tokenize");
    require_shape(c.post("/tokenize", R"({"content": "Hello world", "with_pieces": true})").json(),
                  "POST /tokenize with_pieces");
    require_shape(c.post("/detokenize", R"({"tokens": [1, 2, 3]})").json(), "POST /detokenize");
    require_shape(c.post("/apply-template", R"({"messages": [{"role": "user", "content": "hi"}]})").json(),
                  "POST /apply-template");
    const auto bad = c.post("/completion", R"({"prompt": "x", "n_predict": "many"})");
    CHECK(bad.status == 400);
    require_shape(bad.json(), "error");
}

TEST_CASE("shapes: native /completion, whole and streamed", "[integration][shapes]") {
    Client c("127.0.0.1", shape_server().port());
    const json body{{"prompt", "Once upon a time"}, {"n_predict", 8}, {"temperature", 0}};
    const json whole = c.post("/completion", body.dump()).json();
    require_shape(whole, "POST /completion");
    CHECK(whole["tokens"].empty());  // present, empty unless return_tokens
    json probs = body;
    probs["n_probs"] = 2;
    require_shape(c.post("/completion", probs.dump()).json(), "POST /completion n_probs");

    json sbody = body;
    sbody["stream"] = true;
    const auto events = stream_events(c, "/completion", sbody);
    REQUIRE(events.size() >= 2);
    size_t n_tokens = 0;
    for (size_t i = 0; i + 1 < events.size(); ++i) {
        require_shape(events[i], "POST /completion stream chunk");
        CHECK(events[i]["stop"] == false);
        n_tokens += events[i]["tokens"].size();
        CHECK(events[i]["tokens_predicted"] == (int)n_tokens);  // the count so far
        CHECK(events[i]["id_slot"].get<int>() >= 0);
    }
    require_shape(events.back(), "POST /completion stream final");
    CHECK(events.back()["stop"] == true);
    CHECK(n_tokens == 8);
    CHECK(events.back()["tokens_predicted"] == 8);
}

TEST_CASE("shapes: /v1/completions and /v1/chat/completions, whole and streamed", "[integration][shapes]") {
    Client c("127.0.0.1", shape_server().port());
    const json cbody{{"prompt", "Once upon a time"}, {"max_tokens", 8}, {"temperature", 0}};
    require_shape(c.post("/v1/completions", cbody.dump()).json(), "POST /v1/completions");
    json cs = cbody;
    cs["stream"] = true;
    auto events = stream_events(c, "/v1/completions", cs);
    REQUIRE(events.size() >= 2);
    for (size_t i = 0; i + 1 < events.size(); ++i)
        require_shape(events[i], "POST /v1/completions stream chunk");
    require_shape(events.back(), "POST /v1/completions stream final");  // usage without include_usage
    CHECK(events.back()["usage"]["completion_tokens"] == 8);

    require_shape(c.post("/v1/chat/completions", kChat.dump()).json(), "POST /v1/chat/completions");
    json lp = kChat;
    lp["logprobs"] = true;
    lp["top_logprobs"] = 2;
    const json lpr = c.post("/v1/chat/completions", lp.dump()).json();
    require_shape(lpr, "POST /v1/chat/completions logprobs");
    CHECK(lpr["choices"][0]["logprobs"]["content"].size() == 8);

    json st = kChat;
    st["stream"] = true;
    events = stream_events(c, "/v1/chat/completions", st);
    REQUIRE(events.size() >= 3);
    require_shape(events.front(), "POST /v1/chat/completions stream first");
    CHECK(events.front()["choices"][0]["delta"]["role"] == "assistant");
    for (size_t i = 1; i + 1 < events.size(); ++i)
        require_shape(events[i], "POST /v1/chat/completions stream chunk");
    require_shape(events.back(), "POST /v1/chat/completions stream final");
    CHECK(events.back()["usage"]["completion_tokens"] == 8);
    // With include_usage, the usage chunk (no choices) comes last and carries the timings too, as in
    // llama-server 2026.
    json su = st;
    su["stream_options"] = {{"include_usage", true}};
    events = stream_events(c, "/v1/chat/completions", su);
    REQUIRE(events.size() >= 3);
    CHECK(events.back()["choices"].empty());
    CHECK(events.back()["usage"]["completion_tokens"] == 8);
    CHECK(events.back()["timings"]["predicted_n"] == 8);

    // Streamed with logprobs: every chunk with text carries the log-probabilities of its tokens, the first
    // one included, and together they cover every generated token.
    lp["stream"] = true;
    events = stream_events(c, "/v1/chat/completions", lp);
    size_t n_probs = 0;
    std::string text, from_probs;
    for (size_t i = 1; i + 1 < events.size(); ++i) {
        const json& ch = events[i]["choices"][0];
        if (!ch["delta"].contains("content")) continue;
        require_shape(events[i], "POST /v1/chat/completions stream logprobs");
        REQUIRE(ch["logprobs"].is_object());
        n_probs += ch["logprobs"]["content"].size();
        text += ch["delta"]["content"].get<std::string>();
        for (const auto& e : ch["logprobs"]["content"]) from_probs += e["token"].get<std::string>();
    }
    CHECK(n_probs == 8);
    CHECK(text == from_probs);
}

TEST_CASE("shapes: slot save, restore and erase", "[integration][shapes]") {
    Client c("127.0.0.1", shape_server().port());
    c.post("/completion", R"({"prompt": "Once upon a time", "n_predict": 4, "id_slot": 0})");
    require_shape(c.post("/slots/0?action=save", R"({"filename": "shape.bin"})").json(),
                  "POST /slots/0?action=save");
    require_shape(c.post("/slots/0?action=restore", R"({"filename": "shape.bin"})").json(),
                  "POST /slots/0?action=restore");
    require_shape(c.post("/slots/0?action=erase", "{}").json(), "POST /slots/0?action=erase");
}

TEST_CASE("shapes: embeddings endpoints", "[integration][shapes]") {
    ServerProcess s({"-m", stories_model(), "-c", "256", "-t", "1", "--embeddings", "--pooling", "mean"});
    Client c("127.0.0.1", s.port());
    require_shape(c.post("/v1/embeddings", R"({"input": "hello"})").json(), "POST /v1/embeddings");
    require_shape(c.post("/embedding", R"({"content": "hello"})").json(), "POST /embedding");
}

// ---- llama-server request fields: they work, or they are a 400 naming the field ----------------------

TEST_CASE("timings_per_token: every streamed chunk carries the timings so far", "[integration][fields]") {
    Client c("127.0.0.1", shape_server().port());
    auto events = stream_events(
        c, "/completion",
        json{{"prompt", "Once"}, {"n_predict", 6}, {"stream", true}, {"timings_per_token", true}});
    int last = 0;
    for (size_t i = 0; i + 1 < events.size(); ++i) {
        require_shape(events[i], "POST /completion stream chunk timings_per_token");
        const int n = events[i]["timings"]["predicted_n"];
        CHECK(n > last);
        last = n;
    }
    CHECK(last == 6);
    json chat = kChat;
    chat["stream"] = true;
    chat["timings_per_token"] = true;
    events = stream_events(c, "/v1/chat/completions", chat);
    for (size_t i = 1; i < events.size(); ++i) CHECK(events[i].contains("timings"));
    // Without it, only the last chunk has them.
    events = stream_events(c, "/completion", json{{"prompt", "Once"}, {"n_predict", 3}, {"stream", true}});
    for (size_t i = 0; i + 1 < events.size(); ++i) CHECK_FALSE(events[i].contains("timings"));
}

TEST_CASE("response_fields keeps the named fields, lifting nested ones", "[integration][fields]") {
    Client c("127.0.0.1", shape_server().port());
    const json r =
        c.post(
             "/completion",
             R"({"prompt": "Once", "n_predict": 3, "response_fields": ["content", "generation_settings/n_predict", "missing"]})")
            .json();
    CHECK(r.size() == 2);
    CHECK(r["content"].is_string());
    CHECK(r["generation_settings/n_predict"] == 3);
}

TEST_CASE("n_indent stops at a line indented less, keeping its indentation", "[integration][fields]") {
    Client c("127.0.0.1", shape_server().port());
    // The grammar makes the model write exactly this text.
    const json body{{"prompt", "Once"},
                    {"n_predict", 64},
                    {"grammar", R"(root ::= "def f():\n    a = 1\n    b = 2\nc = 3\n")"}};
    const json plain = c.post("/completion", body.dump()).json();
    CHECK(plain["content"] == "def f():\n    a = 1\n    b = 2\nc = 3\n");
    json indent = body;
    indent["n_indent"] = 4;
    const json r = c.post("/completion", indent.dump()).json();
    CHECK(r["content"] == "def f():\n    a = 1\n    b = 2\n");
    CHECK(r["stop_type"] == "limit");
}

TEST_CASE("t_max_predict_ms ends generation at a new line once the time is up", "[integration][fields]") {
    Client c("127.0.0.1", shape_server().port());
    const json body{
        {"prompt", "Once"}, {"n_predict", 300}, {"ignore_eos", true}, {"grammar", R"(root ::= ("ab\n")+)"}};
    const json plain = c.post("/completion", body.dump()).json();
    CHECK(plain["tokens_predicted"] == 300);
    json limited = body;
    limited["t_max_predict_ms"] = 1;
    const json r = c.post("/completion", limited.dump()).json();
    INFO(r.dump());
    CHECK(r["tokens_predicted"].get<int>() < 300);
    CHECK(r["stop_type"] == "limit");
    CHECK(r["content"].get<std::string>().find('\n') != std::string::npos);
}

TEST_CASE("echo repeats the prompt in /v1/completions, with logprobs it is a 400", "[integration][fields]") {
    Client c("127.0.0.1", shape_server().port());
    const json body{{"prompt", "Once upon a time"}, {"max_tokens", 4}, {"temperature", 0}, {"echo", true}};
    const json plain =
        c.post("/v1/completions",
               json{{"prompt", "Once upon a time"}, {"max_tokens", 4}, {"temperature", 0}}.dump())
            .json();
    const json r = c.post("/v1/completions", body.dump()).json();
    CHECK(r["choices"][0]["text"] == "Once upon a time" + plain["choices"][0]["text"].get<std::string>());
    json sbody = body;
    sbody["stream"] = true;
    std::string streamed;
    for (const auto& e : stream_events(c, "/v1/completions", sbody))
        if (!e["choices"].empty()) streamed += e["choices"][0]["text"].get<std::string>();
    CHECK(streamed == r["choices"][0]["text"]);
    json lp = body;
    lp["logprobs"] = 2;
    const auto bad = c.post("/v1/completions", lp.dump());
    CHECK(bad.status == 400);
    CHECK(bad.body.find("echo") != std::string::npos);
}

// best_of, and suffix on a model without fill-in-the-middle tokens (with them it is /infill's layout).
TEST_CASE("OpenAI fields llama-server refuses are a 400 naming them", "[integration][fields]") {
    Client c("127.0.0.1", shape_server().port());
    for (const std::string f : {"suffix", "best_of"}) {
        json body{{"prompt", "a"}, {"max_tokens", 2}};
        body[f] = f == "suffix" ? json("z") : json(2);
        const auto r = c.post("/v1/completions", body.dump());
        INFO(r.body);
        CHECK(r.status == 400);
        CHECK(r.body.find("'" + f + "'") != std::string::npos);
    }
    // best_of 1 is OpenAI's default: one completion, as without it.
    const auto one = c.post("/v1/completions", json{{"prompt", "a"}, {"max_tokens", 2}, {"best_of", 1}}.dump());
    CHECK(one.status == 200);
    CHECK(one.json()["choices"].size() == 1);
}

TEST_CASE("n_cmpl, n_cache_reuse, n_discard and return_progress work", "[integration][fields]") {
    Client c("127.0.0.1", shape_server().port());
    // n_cmpl: several completions of one prompt.
    const json many = c.post("/completion", R"({"prompt": "Once", "n_predict": 2, "n_cmpl": 2})").json();
    REQUIRE(many.is_array());
    CHECK(many.size() == 2);
    // return_progress: the prompt's progress comes before the tokens.
    const auto events = stream_events(c, "/completion",
                                      json{{"prompt", "Once upon a time there was"},
                                           {"n_predict", 2},
                                           {"stream", true},
                                           {"return_progress", true},
                                           {"cache_prompt", false}});
    REQUIRE(!events.empty());
    REQUIRE(events[0].contains("prompt_progress"));
    const json& pp = events[0]["prompt_progress"];
    CHECK(pp["processed"] == pp["total"]);
    CHECK(pp["total"].get<int>() > 1);
    CHECK(pp["time_ms"].is_number());
    // n_cache_reuse: without the server flag, the request's own minimum chunk moves cached text.
    std::string a = "the cat sat on the mat", b = " and the dog ran far away", rest;
    for (int i = 0; i < 6; ++i) rest += " then the bird sang a song number " + std::to_string(i);
    c.post("/completion", json{{"prompt", a + b + rest}, {"n_predict", 1}, {"id_slot", 1}}.dump());
    const json reused =
        c.post("/completion",
               json{{"prompt", a + rest}, {"n_predict", 1}, {"id_slot", 1}, {"n_cache_reuse", 8}}.dump())
            .json();
    CHECK(reused["tokens_cached"].get<int>() == reused["tokens_evaluated"].get<int>() - 1);
    const json base{{"prompt", "Once upon a time"},
                    {"n_predict", 120},
                    {"temperature", 0},
                    {"ignore_eos", true},
                    {"return_tokens", true}};
    {
        // Without --context-shift (llama-server's default since 2025) a full context ends the request.
        ServerProcess unshifted({"-m", stories_model(), "-c", "64", "-t", "1"});
        const json full = Client("127.0.0.1", unshifted.port()).post("/completion", base.dump()).json();
        CHECK(full["tokens_predicted"].get<int>() + full["tokens_evaluated"].get<int>() == 64);
        CHECK(full["stop_type"] == "limit");
        CHECK(full["truncated"] == true);  // cut short by the context, as llama-server 0.7.0 reports it
    }
    // n_discard: the context shift drops that many tokens instead of half.
    ServerProcess small({"-m", stories_model(), "-c", "64", "-t", "1", "--context-shift"});
    Client sc("127.0.0.1", small.port());
    const json half = sc.post("/completion", base.dump()).json();
    json d = base;
    d["n_discard"] = 4;
    const json four = sc.post("/completion", d.dump()).json();
    CHECK(half["tokens_predicted"] == 120);
    CHECK(four["tokens_predicted"] == 120);
    CHECK(four["tokens"] != half["tokens"]);  // a different context after the first shift
    CHECK(c.post("/completion", R"({"prompt": "a", "n_discard": -1})").status == 400);
}
