// The HTTP API against the real binary and stories260K: endpoints, OpenAI semantics, errors.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

ServerProcess& shared_server() {
    static ServerProcess s({"-m", stories_model(), "-np", "2", "-c", "1024", "-t", "1", "--metrics"});
    return s;
}

void require_error(const server::http::ClientResponse& r, int status) {
    INFO(r.body);
    REQUIRE(r.status == status);
    const json j = json::parse(r.body);
    REQUIRE(j["error"]["message"].is_string());
    REQUIRE(!j["error"]["message"].get<std::string>().empty());
    REQUIRE(j["error"]["type"].is_string());
    REQUIRE(j["error"]["code"] == status);
}

}  // namespace

TEST_CASE("health, models, props, slots", "[integration][api]") {
    Client c("127.0.0.1", shared_server().port());
    REQUIRE(c.get("/health").json()["status"] == "ok");
    const json models = c.get("/v1/models").json();
    REQUIRE(models["object"] == "list");
    REQUIRE(models["data"][0]["id"] == "stories260K.gguf");
    REQUIRE(models["data"][0]["meta"]["n_vocab"] == 512);
    const json props = c.get("/props").json();
    REQUIRE(props["total_slots"] == 2);
    REQUIRE(props["default_generation_settings"]["n_ctx"] == 512);
    REQUIRE(props["chat_format"] == "chatml");
    const json slots = c.get("/slots").json();
    REQUIRE(slots.size() == 2);
    REQUIRE(slots[0]["is_processing"] == false);
}

TEST_CASE("native /completion reproduces the greedy reference", "[integration][api]") {
    Client c("127.0.0.1", shared_server().port());
    const json g = stories_golden();
    for (int i = 0; i < 2; ++i) {
        const auto& cs = g["cases"][i];
        const json r = c.post("/completion", json{{"prompt", cs["prompt"]},
                                                  {"n_predict", 96},
                                                  {"temperature", 0},
                                                  {"return_tokens", true}}
                                                 .dump())
                           .json();
        REQUIRE(r["tokens"] == cs["completion_tokens"]);
        REQUIRE(r["content"] == cs["completion_text"]);
        REQUIRE(r["tokens_evaluated"] == cs["prompt_tokens"].size());
        REQUIRE(r["stop_type"] == "limit");
        REQUIRE(r["timings"]["predicted_n"] == 96);
        // The prompt as its tokens read, BOS included, as llama-server writes it.
        REQUIRE(r["prompt"] == "<s> " + cs["prompt"].get<std::string>());
    }
    // A prompt given as token ids is written out the same way.
    const json ids = c.post("/tokenize", R"({"content": "Once upon a time", "add_special": true})").json()["tokens"];
    const json r = c.post("/completion", json{{"prompt", ids}, {"n_predict", 1}}.dump()).json();
    CHECK(r["prompt"] == "<s> Once upon a time");
}

TEST_CASE("streamed /completion sends the same text in pieces and ends with stop", "[integration][api]") {
    Client c("127.0.0.1", shared_server().port());
    const json cs = stories_golden()["cases"][1];
    std::string text;
    json last;
    int events = 0;
    auto res = c.stream(
        "POST", "/completion",
        json{{"prompt", cs["prompt"]}, {"n_predict", 40}, {"temperature", 0}, {"stream", true}}.dump(), {},
        [&](const server::http::SseEvent& e) {
            last = json::parse(e.data);
            text += last["content"].get<std::string>();
            ++events;
            return true;
        });
    REQUIRE(res.status == 200);
    REQUIRE(res.complete);
    REQUIRE(events > 10);
    REQUIRE(last["stop"] == true);
    REQUIRE(cs["completion_text"].get<std::string>().rfind(text, 0) == 0);
}

TEST_CASE("stop strings end generation and are not emitted, also when streamed", "[integration][api]") {
    Client c("127.0.0.1", shared_server().port());
    const json cs = stories_golden()["cases"][0];  // ", there was a little girl named Lily. She loved ..."
    const json body{{"prompt", cs["prompt"]},
                    {"max_tokens", 60},
                    {"temperature", 0},
                    {"stop", json::array({"Lily", "zzz"})}};
    const json r = c.post("/v1/completions", body.dump()).json();
    REQUIRE(r["choices"][0]["text"] == ", there was a little girl named ");
    REQUIRE(r["choices"][0]["finish_reason"] == "stop");
    json sbody = body;
    sbody["stream"] = true;
    std::string text;
    bool done = false;
    c.stream("POST", "/v1/completions", sbody.dump(), {}, [&](const server::http::SseEvent& e) {
        if (e.data == "[DONE]") {
            done = true;
            return true;
        }
        const json j = json::parse(e.data);
        const std::string piece = j["choices"][0]["text"];
        REQUIRE(piece.find("Li") == std::string::npos);  // never a piece of the stop string
        text += piece;
        return true;
    });
    REQUIRE(done);
    REQUIRE(text == ", there was a little girl named ");
}

TEST_CASE("an ending EOS is reported in tokens and completion_probabilities, as llama-server does",
          "[integration][api]") {
    // synth-phi3's golden case 1 ends at EOS after 5 tokens; llama-server reports the EOS as the 6th token
    // (and its probabilities) with no text. The OpenAI APIs list the text's tokens only.
    std::ifstream f(shared_path("golden/synth-phi3-q8_0.greedy.json"));
    const json cs = json::parse(f)["cases"][1];
    REQUIRE(cs["stop_type"] == "eos");
    const json want = cs["completion_tokens"];
    const size_t n = want.size();
    ServerProcess srv(
        {"-m", shared_path("models/synth/synth-phi3-q8_0.gguf"), "-np", "1", "-c", "512", "-t", "1"});
    Client c("127.0.0.1", srv.port());
    const json body{{"prompt", cs["prompt_tokens"]},
                    {"n_predict", 32},
                    {"temperature", 0},
                    {"return_tokens", true},
                    {"n_probs", 3}};
    const json r = c.post("/completion", body.dump()).json();
    REQUIRE(r["stop_type"] == "eos");
    REQUIRE(r["tokens"] == want);
    REQUIRE(r["content"] == cs["completion_text"]);
    REQUIRE(r["completion_probabilities"].size() == n);
    REQUIRE(r["completion_probabilities"][n - 1]["id"] == want[n - 1]);
    REQUIRE(r["timings"]["predicted_n"] == n);

    json sbody = body;
    sbody["stream"] = true;
    json tokens = json::array(), probs = json::array();
    std::string text;
    c.stream("POST", "/completion", sbody.dump(), {}, [&](const server::http::SseEvent& e) {
        const json j = json::parse(e.data);
        text += j["content"].get<std::string>();
        for (const auto& t : j.value("tokens", json::array())) tokens.push_back(t);
        for (const auto& p : j.value("completion_probabilities", json::array())) probs.push_back(p["id"]);
        return true;
    });
    REQUIRE(tokens == want);
    REQUIRE(probs == want);
    REQUIRE(text == cs["completion_text"]);

    const json oai =
        c.post("/v1/completions",
               json{{"prompt", cs["prompt_tokens"]}, {"max_tokens", 32}, {"temperature", 0}, {"logprobs", 2}}
                   .dump())
            .json();
    REQUIRE(oai["choices"][0]["finish_reason"] == "stop");
    REQUIRE(oai["choices"][0]["logprobs"]["tokens"].size() == n - 1);
    REQUIRE(oai["usage"]["completion_tokens"] == n);
}

TEST_CASE("chat completions with usage and logprobs", "[integration][api]") {
    Client c("127.0.0.1", shared_server().port());
    const json body{{"messages", json::array({{{"role", "user"}, {"content", "Hello"}}})},
                    {"max_completion_tokens", 8},
                    {"temperature", 0},
                    {"logprobs", true},
                    {"top_logprobs", 3}};
    const json r = c.post("/v1/chat/completions", body.dump()).json();
    REQUIRE(r["object"] == "chat.completion");
    REQUIRE(r["choices"][0]["finish_reason"] == "length");
    REQUIRE(r["usage"]["completion_tokens"] == 8);
    const json& lp = r["choices"][0]["logprobs"]["content"];
    REQUIRE(lp.size() == 8);
    for (const auto& e : lp) {
        REQUIRE(e["top_logprobs"].size() == 3);
        REQUIRE(e["logprob"].get<double>() <= 0.0);
        // greedy: the chosen token is the most likely one
        REQUIRE(e["token"] == e["top_logprobs"][0]["token"]);
    }
    const json tpl = c.post("/apply-template", json{{"messages", body["messages"]}}.dump()).json();
    REQUIRE(tpl["prompt"] == "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("same seed, same text, n choices", "[integration][api]") {
    Client c("127.0.0.1", shared_server().port());
    const json body{{"prompt", "Once upon a time"}, {"max_tokens", 24}, {"temperature", 1.0}, {"seed", 42}};
    const json a = c.post("/v1/completions", body.dump()).json();
    const json b = c.post("/v1/completions", body.dump()).json();
    REQUIRE(a["choices"][0]["text"] == b["choices"][0]["text"]);
    json nb = body;
    nb["n"] = 3;
    const json n = c.post("/v1/completions", nb.dump()).json();
    REQUIRE(n["choices"].size() == 3);
    REQUIRE(n["choices"][0]["text"] == a["choices"][0]["text"]);  // choice 0 keeps the seed
    REQUIRE(n["usage"]["prompt_tokens"] == a["usage"]["prompt_tokens"]);
}

TEST_CASE("tokenize and detokenize round trip", "[integration][api]") {
    Client c("127.0.0.1", shared_server().port());
    const json t =
        c.post("/tokenize", json{{"content", "Once upon a time"}, {"add_special", true}}.dump()).json();
    REQUIRE(t["tokens"] == json::array({1, 403, 407, 261, 378}));
    const json p = c.post("/tokenize", json{{"content", "Once"}, {"with_pieces", true}}.dump()).json();
    REQUIRE(p["tokens"][0]["piece"].is_string());
    const json d = c.post("/detokenize", json{{"tokens", json::array({403, 407, 261, 378})}}.dump()).json();
    REQUIRE(d["content"] == "Once upon a time");
    // llama-server's mixed content (strings and token ids) and null flags (their defaults).
    const json mixed = c.post("/tokenize", R"({"content": ["Once upon", 261, " time"], "add_special": null,
                                                "with_pieces": null})")
                           .json();
    const json once_upon = c.post("/tokenize", R"({"content": "Once upon"})").json()["tokens"];
    REQUIRE(mixed["tokens"].size() >= once_upon.size() + 2);
    CHECK(mixed["tokens"][0] == once_upon[0]);
    CHECK(mixed["tokens"][once_upon.size()] == 261);
    CHECK(c.post("/tokenize", R"({"content": ["a", 99999999]})").status == 400);
    // Control tokens are shown, as llama-server shows them.
    const json b = c.post("/detokenize", json{{"tokens", json::array({1, 403, 407, 261, 378})}}.dump()).json();
    CHECK(b["content"].get<std::string>().rfind("<s>", 0) == 0);
    CHECK(b["content"].get<std::string>().find("Once upon a time") != std::string::npos);
}

TEST_CASE("bad input gets the right status and an OpenAI error body", "[integration][api][errors]") {
    Client c("127.0.0.1", shared_server().port());
    require_error(c.post("/v1/chat/completions", "{\"messages\": [}"), 400);              // malformed JSON
    require_error(c.post("/v1/chat/completions", json{{"messages", "hi"}}.dump()), 400);  // wrong type
    require_error(c.post("/v1/completions", json{{"prompt", "x"}, {"max_tokens", -3}}.dump()), 400);
    require_error(c.post("/v1/completions", json{{"prompt", "x"}, {"temperature", "hot"}}.dump()), 400);
    require_error(c.post("/v1/completions", json{{"prompt", "x"}, {"stop", 5}}.dump()), 400);
    require_error(c.post("/v1/completions", json{{"max_tokens", 5}}.dump()), 400);  // no prompt
    require_error(c.post("/completion", json{{"prompt", json::array({1, 99999})}}.dump()),
                  400);  // bad token id
    require_error(c.get("/v1/nonexistent"), 404);
    require_error(c.get("/v1/completions"), 405);
    std::string long_prompt;
    for (int i = 0; i < 600; ++i) long_prompt += "the dog ran. ";
    require_error(c.post("/v1/completions", json{{"prompt", long_prompt}, {"max_tokens", 4}}.dump()), 400);
    require_error(c.post("/completion", json{{"prompt", "x"}, {"grammar", "root ::= undefined_rule"}}.dump()),
                  400);
    // and the server still serves
    REQUIRE(c.get("/health").status == 200);
    REQUIRE(c.post("/completion", json{{"prompt", "Hello"}, {"n_predict", 4}}.dump()).status == 200);
}

TEST_CASE("metrics expose counters and latency histograms", "[integration][api]") {
    Client c("127.0.0.1", shared_server().port());
    c.post("/completion", json{{"prompt", "Hello"}, {"n_predict", 4}}.dump());
    const auto r = c.get("/metrics");
    REQUIRE(r.status == 200);
    for (const char* name :
         {"llamacpp:prompt_tokens_total", "llamacpp:tokens_predicted_total", "llamacpp:requests_processing",
          "llamacpp:requests_deferred", "llamacpp:kv_cache_usage_ratio",
          "ggserve:time_to_first_token_seconds_bucket", "ggserve:inter_token_latency_seconds_count"})
        REQUIRE(r.body.find(name) != std::string::npos);
}

TEST_CASE("API keys: missing or wrong key is 401, /health and the model list stay public",
          "[integration][api][auth]") {
    ServerProcess s({"-m", stories_model(), "-c", "256", "-t", "1", "--api-key", "secret-1,secret-2"});
    Client c("127.0.0.1", s.port());
    require_error(c.get("/props"), 401);
    require_error(c.get("/props", {{"Authorization", "Bearer nope"}}), 401);
    require_error(c.post("/v1/completions", R"({"prompt": "a", "max_tokens": 1})"), 401);
    REQUIRE(c.get("/props", {{"Authorization", "Bearer secret-2"}}).status == 200);
    REQUIRE(c.get("/health").status == 200);
    // As in llama-server, the model list needs no key.
    REQUIRE(c.get("/v1/models").status == 200);
    REQUIRE(c.get("/models").status == 200);
}

TEST_CASE("curl streams chat completions", "[integration][api][curl]") {
    const std::string cmd =
        "curl -sN --max-time 60 http://127.0.0.1:" + std::to_string(shared_server().port()) +
        "/v1/chat/completions -H 'Content-Type: application/json' -d "
        "'{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":6,\"stream\":true}'";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    REQUIRE(pclose(p) == 0);
    REQUIRE(out.find("data: {") != std::string::npos);
    REQUIRE(out.find("chat.completion.chunk") != std::string::npos);
    REQUIRE(out.size() >= 14);
    REQUIRE(out.substr(out.size() - 14) == "data: [DONE]\n\n");
}

TEST_CASE("invalid command lines exit with code 2", "[integration][cli]") {
    const std::string bin = ggserve_binary();
    auto run = [&](const std::string& args) {
        return WEXITSTATUS(std::system((bin + " " + args + " 2>/dev/null").c_str()));
    };
    REQUIRE(run("serve --no-such-flag") == 2);
    REQUIRE(run("serve -m x --port notaport") == 2);
    REQUIRE(run("serve -m x -ctv q8_0") == 2);  // quantized V without flash attention
    REQUIRE(run("bogus") == 2);
    REQUIRE(run("serve -m /nonexistent.gguf --port 0") == 1);
}
