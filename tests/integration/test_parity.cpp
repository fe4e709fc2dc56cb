// Where llama-server 0.7.0 (the 2026 release, run side by side with ggserve) answers in a way its clients
// read: the context-overflow error's type and numbers, /v1/completions logprobs in both shapes, progress
// chunks with a choice, /props' template capabilities and endpoint flags, llama-server's /metrics series,
// images refused on a text model, /apply-template without the BOS text, enable_thinking on by default,
// -a with several names, --rope-scale alone, the 2026 environment variable names.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "cli_process.h"
#include "context_util.h"
#include "server/http/client.h"
#include "server_process.h"

namespace {

using json = nlohmann::json;
using server::http::Client;

ServerProcess& parity_server() {
    static ServerProcess s({"-m", stories_model(), "-np", "2", "-c", "512", "-t", "1", "--metrics", "-a",
                            "story,tiny-story", "--tags", "demo,small"});
    return s;
}

using ctxtest::stream_events;

std::string long_prompt() {
    std::string p;
    for (int i = 0; i < 200; ++i) p += "the cat sat on the mat and ";
    return p;
}

}  // namespace

TEST_CASE("a prompt over the context is exceed_context_size_error with n_prompt_tokens and n_ctx",
          "[integration][parity]") {
    Client c("127.0.0.1", parity_server().port());
    const json chat{{"messages", json::array({{{"role", "user"}, {"content", long_prompt()}}})}, {"max_tokens", 4}};
    json streamed = chat;
    streamed["stream"] = true;
    const json completion{{"prompt", long_prompt()}, {"n_predict", 4}};
    for (const auto& [path, body] : std::vector<std::pair<std::string, json>>{
             {"/v1/chat/completions", chat}, {"/v1/chat/completions", streamed}, {"/completion", completion}}) {
        const auto r = c.post(path, body.dump());
        INFO(path << " " << r.body);
        REQUIRE(r.status == 400);
        const json e = r.json()["error"];
        CHECK(e["type"] == "exceed_context_size_error");
        CHECK(e["n_ctx"] == 256);  // per slot: -c 512, two slots
        CHECK(e["n_prompt_tokens"].get<int>() > 256);
        CHECK(e["code"] == 400);
    }
}

TEST_CASE("/v1/completions logprobs carry OpenAI's arrays and llama-server's content entries",
          "[integration][parity]") {
    Client c("127.0.0.1", parity_server().port());
    const json body{{"prompt", "Once upon a time"}, {"max_tokens", 3}, {"temperature", 0}, {"logprobs", 2}};
    const json lp = c.post("/v1/completions", body.dump()).json()["choices"][0]["logprobs"];
    REQUIRE(lp["tokens"].size() == 3);
    REQUIRE(lp["content"].size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        CHECK(lp["content"][i]["token"] == lp["tokens"][i]);
        CHECK(lp["content"][i]["logprob"] == lp["token_logprobs"][i]);
        CHECK(lp["content"][i]["top_logprobs"].size() == 2);
        CHECK(lp["content"][i]["id"].is_number_integer());
    }
}

TEST_CASE("prompt progress chunks carry a choice, so choices[0] works on every chunk", "[integration][parity]") {
    Client c("127.0.0.1", parity_server().port());
    const json chat{{"messages", json::array({{{"role", "user"}, {"content", "Tell me a story"}}})},
                    {"max_tokens", 3},
                    {"stream", true},
                    {"return_progress", true},
                    {"cache_prompt", false}};
    bool progress = false;
    for (const json& e : stream_events(c, "/v1/chat/completions", chat)) {
        REQUIRE_FALSE(e["choices"].empty());
        if (e.contains("prompt_progress")) {
            progress = true;
            CHECK(e["choices"][0]["delta"]["role"] == "assistant");
            CHECK(e["choices"][0]["delta"]["content"].is_null());
        }
    }
    CHECK(progress);
    json completion{{"prompt", "Once upon a time"}, {"max_tokens", 2}, {"stream", true}, {"return_progress", true},
                    {"cache_prompt", false}};
    const auto events = stream_events(c, "/v1/completions", completion);
    REQUIRE(events.front().contains("prompt_progress"));
    CHECK(events.front()["choices"][0]["text"] == "");
}

TEST_CASE("/props: template capabilities, endpoint flags, defaults as llama-server reports them",
          "[integration][parity]") {
    Client c("127.0.0.1", parity_server().port());
    const json p = c.get("/props").json();
    const json& caps = p["chat_template_caps"];
    for (const char* k : {"supports_tools", "supports_tool_calls", "supports_system_role",
                          "supports_parallel_tool_calls", "supports_string_content", "supports_typed_content",
                          "supports_object_arguments", "supports_preserve_reasoning", "supports_reasoning_effort"})
        CHECK(caps[k].is_boolean());
    CHECK(p["endpoint_slots"] == true);
    CHECK(p["endpoint_props"] == false);
    CHECK(p["endpoint_metrics"] == true);
    CHECK(p["modalities"]["video"] == false);
    CHECK(p["default_generation_settings"]["params"]["stream"] == false);
    CHECK(p["default_generation_settings"]["params"]["dry_penalty_last_n"] == 64);
    // llama-server 0.7.0's further fields, with its values for a server started this way.
    const json& gp = p["default_generation_settings"]["params"];
    CHECK(gp["backend_sampling"] == false);
    CHECK(gp["chat_format"] == "Content-only");
    CHECK(gp["generation_prompt"] == "");
    CHECK(gp["grammar_triggers"] == json::array());
    CHECK(gp["preserved_tokens"] == json::array());
    CHECK(gp["reasoning_format"] == "deepseek");
    CHECK(gp["reasoning_in_content"] == false);
    CHECK(gp["speculative.types"] == "none");
    // A lazy grammar's triggers as given, as llama-server lists them (1: word, 2: pattern, 3: pattern_full).
    const json lazy = c.post("/completion", json{{"prompt", "Once"},
                                                 {"n_predict", 1},
                                                 {"grammar", "root ::= \"x\""},
                                                 {"grammar_lazy", true},
                                                 {"grammar_triggers", {{{"type", "word"}, {"value", "Lily"}},
                                                                       {{"type", 2}, {"value", "b+"}},
                                                                       {{"type", 3}, {"value", "^Lily.*"}}}}}
                                                    .dump())
                           .json();
    CHECK(lazy["generation_settings"]["grammar_triggers"] ==
          json::parse(R"([{"type": 1, "value": "Lily"}, {"type": 2, "value": "b+"}, {"type": 3, "value": "^Lily.*"}])"));
    // Without --props, changing them is llama-server's 501.
    const auto r = c.post("/props", R"({"n_predict": 5})");
    CHECK(r.status == 501);
    CHECK(r.json()["error"]["type"] == "not_supported_error");

    // A Jinja template's probed capabilities: Qwen2.5's, as llama-server reports them.
    ServerProcess q({"-m", stories_model(), "-c", "256", "-t", "1", "--chat-template-file",
                     shared_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja")});
    const json qc = Client("127.0.0.1", q.port()).get("/props").json()["chat_template_caps"];
    CHECK(qc == json{{"supports_tools", true},
                     {"supports_tool_calls", true},
                     {"supports_tool_responses", true},
                     {"supports_system_role", true},
                     {"supports_parallel_tool_calls", true},
                     {"supports_string_content", true},
                     {"supports_typed_content", false},
                     {"supports_object_arguments", true},
                     {"supports_preserve_reasoning", false},
                     {"supports_reasoning_effort", false}});
}

TEST_CASE("/metrics has llama-server's series: cached prompt tokens, longest sequence, speculative totals",
          "[integration][parity]") {
    Client c("127.0.0.1", parity_server().port());
    const json body{{"prompt", "Once upon a time there was a little girl"}, {"n_predict", 4}, {"id_slot", 1}};
    c.post("/completion", body.dump());
    const json second = c.post("/completion", body.dump()).json();
    REQUIRE(second["tokens_cached"].get<int>() > 0);
    const std::string m = c.get("/metrics").body;
    auto value = [&](const std::string& name) {
        const size_t at = m.find("\n" + name + " ");
        REQUIRE(at != std::string::npos);
        return std::stod(m.substr(at + name.size() + 2));
    };
    CHECK(value("llamacpp:prompt_tokens_cached_total") > 0);
    CHECK(value("llamacpp:n_tokens_max") >= second["tokens_evaluated"].get<double>());
    CHECK(value("llamacpp:spec_decode_num_draft_tokens_total") == 0);
    CHECK(value("llamacpp:spec_decode_num_accepted_tokens_total") == 0);
    CHECK(value("llamacpp:spec_decode_num_drafts_total") == 0);
    CHECK(m.find("# TYPE llamacpp:n_busy_slots_per_decode gauge") != std::string::npos);

    // The longest sequence as llama-server counts it: the tokens a slot's cache held (the last token
    // sampled is never evaluated).
    ServerProcess fresh({"-m", stories_model(), "-c", "512", "-t", "1", "--metrics"});
    Client fc("127.0.0.1", fresh.port());
    const json one = fc.post("/completion", json{{"prompt", "Once"}, {"n_predict", 4}}.dump()).json();
    const std::string fm = fc.get("/metrics").body;
    const std::string key = "\nllamacpp:n_tokens_max ";
    const size_t at = fm.find(key);
    REQUIRE(at != std::string::npos);
    CHECK(std::stod(fm.substr(at + key.size())) == one["tokens_evaluated"].get<double>() + 4 - 1);
}

TEST_CASE("an image, audio or file part is a 400 on a text-only model, text parts still work",
          "[integration][parity]") {
    Client c("127.0.0.1", parity_server().port());
    const json parts[] = {
        {{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64,iVBORw0KGgo="}}}},
        {{"type", "input_audio"}, {"input_audio", {{"data", "UklGRg=="}, {"format", "wav"}}}},
        {{"type", "file"}, {"file", {{"file_data", "aGk="}}}},
        {{"type", "hologram"}},
    };
    for (const json& part : parts) {
        const json body{{"messages", json::array({{{"role", "user"},
                                                   {"content", json::array({{{"type", "text"}, {"text", "What is it?"}},
                                                                            part})}}})},
                        {"max_tokens", 2}};
        const auto r = c.post("/v1/chat/completions", body.dump());
        INFO(r.body);
        CHECK(r.status == 400);
        if (part["type"] != "hologram")  // unknown types are already refused by the request schema
            CHECK(r.body.find("messages[0].content[1]") != std::string::npos);
    }
    const json text{{"messages", json::array({{{"role", "user"},
                                               {"content", json::array({{{"type", "text"}, {"text", "Hi"}}})}}})},
                    {"max_tokens", 2}};
    CHECK(c.post("/v1/chat/completions", text.dump()).status == 200);
}

TEST_CASE("/apply-template leaves out the template's BOS text, and thinking is on unless turned off",
          "[integration][parity]") {
    // The R1 distill's template writes bos_token and closes its think block when enable_thinking is false.
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file",
                     shared_path("templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja")});
    Client c("127.0.0.1", s.port());
    const json hi{{"messages", json::array({{{"role", "user"}, {"content", "Tell me a story."}}})}};
    const std::string prompt = c.post("/apply-template", hi.dump()).json()["prompt"];
    INFO(prompt);
    CHECK(prompt.rfind("<s>", 0) == std::string::npos);
    CHECK(prompt.size() >= 8);
    CHECK(prompt.substr(prompt.size() - 8) == "<think>\n");
    // The prompt sent to /completion gets one BOS, as the chat endpoint's own rendering does.
    json chat = hi;
    chat["max_tokens"] = 1;
    const int chat_tokens = c.post("/v1/chat/completions", chat.dump()).json()["usage"]["prompt_tokens"];
    const json completion = c.post("/completion", json{{"prompt", prompt}, {"n_predict", 1}}.dump()).json();
    CHECK(completion["tokens_evaluated"] == chat_tokens);
    // add_generation_prompt false: the conversation without the assistant's opening.
    json no_reply = hi;
    no_reply["add_generation_prompt"] = false;
    const std::string bare = c.post("/apply-template", no_reply.dump()).json()["prompt"];
    CHECK(bare.find("<think>") == std::string::npos);
    CHECK(prompt.rfind(bare, 0) == 0);
    CHECK(bare.size() < prompt.size());
    // Asked off, the block is closed.
    json off = hi;
    off["chat_template_kwargs"] = {{"enable_thinking", false}};
    const std::string closed = c.post("/apply-template", off.dump()).json()["prompt"];
    CHECK(closed.find("</think>") != std::string::npos);
}

TEST_CASE("an alias list (-a A,B) names the model A and lists both, tags (--tags) label it", "[integration][parity]") {
    Client c("127.0.0.1", parity_server().port());
    const json m = c.get("/v1/models").json()["data"][0];
    CHECK(m["id"] == "story");
    CHECK(m["aliases"] == json::array({"story", "tiny-story"}));
    CHECK(m["tags"] == json::array({"demo", "small"}));
    CHECK(c.get("/props").json()["model_alias"] == "story");
}

TEST_CASE("a RoPE scale given alone (--rope-scale) stretches linearly, as llama.cpp reads a model without a scaling type",
          "[integration][parity]") {
    const json body{{"prompt", "Once upon a time"}, {"n_predict", 8}, {"temperature", 0}, {"n_probs", 1}};
    ServerProcess plain({"-m", stories_model(), "-c", "256", "-t", "1"});
    ServerProcess scaled({"-m", stories_model(), "-c", "256", "-t", "1", "--rope-scale", "4"});
    Client pc("127.0.0.1", plain.port()), sc("127.0.0.1", scaled.port());
    const json rope = sc.get("/props").json()["server"]["rope"];
    CHECK(rope["scaling"] == "linear");
    CHECK(rope["freq_scale"].get<double>() == Approx(0.25));
    // The same greedy words on this small model, with other probabilities: the rotation did change.
    const json a = pc.post("/completion", body.dump()).json()["completion_probabilities"];
    const json b = sc.post("/completion", body.dump()).json()["completion_probabilities"];
    REQUIRE(a.size() == b.size());
    double most = 0;
    for (size_t i = 0; i < a.size(); ++i)
        most = std::max(most, std::abs(a[i]["logprob"].get<double>() - b[i]["logprob"].get<double>()));
    CHECK(most > 1e-3);
}

TEST_CASE("llama-server's 2026 environment names configure the draft model and the log",
          "[integration][parity]") {
    ServerProcess s({"-m", stories_model(), "-c", "256", "-t", "1"}, std::chrono::seconds(60),
                    ServerProcess::WaitFor::Ready,
                    {"LLAMA_ARG_SPEC_DRAFT_MODEL=" + shared_path("models/stories260K-q8_0.gguf"),
                     "LLAMA_ARG_SPEC_DRAFT_N_MAX=5", "LLAMA_ARG_LOG_TIMESTAMPS=0"});
    const json spec = Client("127.0.0.1", s.port()).get("/props").json()["speculative"];
    INFO(spec.dump());
    CHECK(spec["draft_model"] == shared_path("models/stories260K-q8_0.gguf"));
    CHECK(spec["n_max"] == 5);
    CHECK(s.log().find("draft model: ") != std::string::npos);
    const auto bad = ctxtest::run_cli({"serve", "-m", stories_model(), "--port", "0"},
                                      {"LLAMA_ARG_SPEC_DRAFT_N_MAX=lots"});
    CHECK(bad.status == 2);
    CHECK(bad.err.find("LLAMA_ARG_SPEC_DRAFT_N_MAX") != std::string::npos);
}

TEST_CASE("llama-server spellings that once stopped startup: -fa enabled, -n -2, -t -1, -np -1, projector "
          "switches, --no-log-jsonl, --spec-draft-n-ubatch",
          "[integration][parity]") {
    ServerProcess s({"-m", stories_model(), "-c", "256", "-fa", "enabled", "-n", "-2", "-t", "-1", "-np", "-1",
                     "--no-mmproj", "--mmproj-offload", "--no-mmproj-auto", "--no-log-jsonl", "-md",
                     shared_path("models/stories260K-q8_0.gguf"), "--spec-draft-n-ubatch", "64"});
    Client c("127.0.0.1", s.port());
    const json p = c.get("/props").json();
    CHECK(p["total_slots"] == 4);  // llama-server's auto: 4 slots sharing the context
    CHECK(p["default_generation_settings"]["n_ctx"] == 256);
    CHECK(p["default_generation_settings"]["params"]["n_predict"] == -1);
    CHECK(c.post("/completion", R"({"prompt": "Once upon a time", "n_predict": 4})").status == 200);
    const auto bad = ctxtest::run_cli({"serve", "-m", stories_model(), "--port", "0", "-fa", "sometimes"});
    CHECK(bad.status == 2);
    // A comma list of hosts says why it cannot work instead of "cannot resolve host".
    const auto r = ctxtest::run_cli({"serve", "-m", stories_model(), "--host", "127.0.0.1,::1"});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find("one address") != std::string::npos);
}

TEST_CASE("the version flag prints llama-server's version line, also without a command", "[integration][parity]") {
    for (const std::vector<std::string>& args : {std::vector<std::string>{"serve", "--version"},
                                                std::vector<std::string>{"--version"}}) {
        const auto r = ctxtest::run_cli(args);
        INFO(r.out << r.err);
        CHECK(r.status == 0);
        CHECK(r.out.find("version: ") != std::string::npos);
        CHECK(r.out.find("built with ") != std::string::npos);
    }
}

namespace {
// curl's answer (body, then the status code on its own line) for a request over a UNIX socket.
std::string curl_unix(const std::string& socket, const std::string& path, const std::string& body = "") {
    std::string cmd = "curl -s --max-time 30 -w '\\n%{http_code}' --unix-socket " + ctxtest::shell_quote(socket);
    if (!body.empty()) cmd += " -H 'Content-Type: application/json' -d " + ctxtest::shell_quote(body);
    return run_ggserve_cmd(cmd + " " + ctxtest::shell_quote("http://localhost" + path)).output;
}
}  // namespace

TEST_CASE("a host ending in .sock serves HTTP on that UNIX socket, as llama-server does", "[integration][parity]") {
    ctxtest::TempDir dir;
    const std::string sock = dir.file("ggserve.sock");
    std::ofstream(sock) << "a plain file";  // not a socket: refused, left alone
    const auto refused = ctxtest::run_cli({"serve", "-m", stories_model(), "--host", sock});
    CHECK(refused.status != 0);
    CHECK(refused.err.find("not a socket") != std::string::npos);
    std::filesystem::remove(sock);
    {
        ServerProcess s({"-m", stories_model(), "-c", "256", "-t", "1", "--host", sock}, std::chrono::seconds(60),
                        ServerProcess::WaitFor::Nothing);
        REQUIRE(s.wait_log("ready:", std::chrono::seconds(60)));
        const std::string health = curl_unix(sock, "/health");
        REQUIRE(health.find("\"ok\"") != std::string::npos);
        const std::string done = curl_unix(sock, "/completion", R"({"prompt": "Once upon a time", "n_predict": 4})");
        CHECK(done.substr(done.size() - 3) == "200");
        CHECK(done.find("\"tokens_predicted\":4") != std::string::npos);
        CHECK(s.log().find("listening on http+unix://" + sock) != std::string::npos);
    }
    // A server that stopped removes its socket.
    CHECK_FALSE(std::filesystem::exists(sock));
}

TEST_CASE("the tokens of a matched stop string are left out of tokens, probabilities and logprobs",
          "[integration][parity]") {
    Client c("127.0.0.1", parity_server().port());
    const json base{{"prompt", "Once upon a time"}, {"n_predict", 40}, {"temperature", 0}, {"n_probs", 1},
                    {"return_tokens", true}};
    const json plain = c.post("/completion", base.dump()).json();
    const std::string text = plain["content"];
    // A stop string that starts on a token boundary at its first occurrence: the tokens before it spell
    // exactly the text before it. Returns the stop string, its offset and the number of tokens before it.
    auto boundary_stop = [](const std::string& text, const json& entries) {
        size_t offset = 0;
        for (size_t k = 0; k + 1 < entries.size(); ++k) {
            const std::string word = entries[k]["token"].get<std::string>() + entries[k + 1]["token"].get<std::string>();
            if (k >= 3 && word.size() > 2 && text.find(word) == offset) return std::tuple{word, offset, k};
            offset += entries[k]["token"].get<std::string>().size();
        }
        return std::tuple{std::string(), size_t(0), size_t(0)};
    };
    auto spelled = [](const json& entries) {
        std::string s;
        for (const auto& e : entries) s += e["token"].get<std::string>();
        return s;
    };
    const auto [stop, at, n_before] = boundary_stop(text, plain["completion_probabilities"]);
    INFO(text << " | stop: " << stop);
    REQUIRE_FALSE(stop.empty());
    json body = base;
    body["stop"] = {stop};
    const json r = c.post("/completion", body.dump()).json();
    CHECK(r["content"] == text.substr(0, at));
    CHECK(r["stop_type"] == "word");
    CHECK(spelled(r["completion_probabilities"]) == text.substr(0, at));
    CHECK(r["tokens"].size() == n_before);
    // Streamed: the chunks' tokens and probabilities, together, likewise.
    body["stream"] = true;
    std::string streamed_text;
    json streamed_probs = json::array();
    size_t streamed_tokens = 0;
    for (const json& e : stream_events(c, "/completion", body)) {
        streamed_text += e.value("content", "");
        for (const auto& p : e.value("completion_probabilities", json::array())) streamed_probs.push_back(p);
        streamed_tokens += e.value("tokens", json::array()).size();
    }
    CHECK(streamed_text == text.substr(0, at));
    CHECK(spelled(streamed_probs) == text.substr(0, at));
    CHECK(streamed_tokens == n_before);
    // OpenAI's endpoints: logprobs align with the text (as OpenAI's do).
    const json comp{{"prompt", "Once upon a time"}, {"max_tokens", 40}, {"temperature", 0}, {"logprobs", 1},
                    {"stop", stop}};
    const json oc = c.post("/v1/completions", comp.dump()).json();
    CHECK(oc["choices"][0]["text"] == text.substr(0, at));
    CHECK(oc["choices"][0]["logprobs"]["tokens"].size() == n_before);
    CHECK(spelled(oc["choices"][0]["logprobs"]["content"]) == text.substr(0, at));
    json comp_stream = comp;
    comp_stream["stream"] = true;
    json oc_entries = json::array();
    for (const json& e : stream_events(c, "/v1/completions", comp_stream)) {
        if (e["choices"].empty() || e["choices"][0]["logprobs"].is_null()) continue;
        for (const auto& p : e["choices"][0]["logprobs"]["content"]) oc_entries.push_back(p);
    }
    CHECK(spelled(oc_entries) == text.substr(0, at));

    // Chat, streamed and not: the log-probabilities spell the content.
    const json chat{{"messages", json::array({{{"role", "user"}, {"content", "Tell me a story"}}})},
                    {"max_tokens", 40}, {"temperature", 0}, {"logprobs", true}};
    const json first = c.post("/v1/chat/completions", chat.dump()).json()["choices"][0];
    const std::string reply = first["message"]["content"];
    const auto [chat_stop, chat_at, chat_before] = boundary_stop(reply, first["logprobs"]["content"]);
    INFO(reply << " | chat stop: " << chat_stop);
    REQUIRE_FALSE(chat_stop.empty());
    json stopped = chat;
    stopped["stop"] = chat_stop;
    const json ch = c.post("/v1/chat/completions", stopped.dump()).json()["choices"][0];
    CHECK(ch["message"]["content"] == reply.substr(0, chat_at));
    CHECK(ch["logprobs"]["content"].size() == chat_before);
    CHECK(spelled(ch["logprobs"]["content"]) == reply.substr(0, chat_at));
    stopped["stream"] = true;
    std::string chat_text;
    json chat_entries = json::array();
    for (const json& e : stream_events(c, "/v1/chat/completions", stopped)) {
        if (e["choices"].empty()) continue;
        chat_text += e["choices"][0]["delta"].value("content", "");
        if (!e["choices"][0]["logprobs"].is_null())
            for (const auto& p : e["choices"][0]["logprobs"]["content"]) chat_entries.push_back(p);
    }
    CHECK(chat_text == reply.substr(0, chat_at));
    CHECK(spelled(chat_entries) == reply.substr(0, chat_at));
}

TEST_CASE("Llama 3.1's template gets today's date as date_string, unless the request gives one",
          "[integration][parity]") {
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--jinja", "--chat-template-file",
                     shared_path("templates/meta-llama-Llama-3.1-8B-Instruct.jinja")});
    Client c("127.0.0.1", s.port());
    auto today = [] {
        const std::time_t now = std::time(nullptr);
        std::tm local{};
        localtime_r(&now, &local);
        char date[32];
        std::strftime(date, sizeof date, "%d %b %Y", &local);
        return std::string(date);
    };
    const json body{{"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})}};
    const std::string before = today();
    const std::string prompt = c.post("/apply-template", body.dump()).json()["prompt"];
    const std::string after = today();
    INFO(prompt);
    CHECK((prompt.find("Today Date: " + before + "\n") != std::string::npos ||
           prompt.find("Today Date: " + after + "\n") != std::string::npos));
    CHECK(prompt.find("26 Jul 2024") == std::string::npos);  // the template's own default
    json given = body;
    given["chat_template_kwargs"] = {{"date_string", "01 Jan 2030"}};
    CHECK(c.post("/apply-template", given.dump()).json()["prompt"].get<std::string>().find(
              "Today Date: 01 Jan 2030\n") != std::string::npos);
}

// Firefunction v2's template prints `functions` and `datetime` and reads no `tools`: without them every chat
// request was a 400 ('functions' is undefined).
TEST_CASE("Firefunction v2's template gets its functions and datetime", "[integration][parity]") {
    ServerProcess s({"-m", stories_model(), "-c", "2048", "-t", "1", "--jinja", "--chat-template-file",
                     shared_path("templates/fireworks-ai-llama-3-firefunction-v2.jinja")});
    Client c("127.0.0.1", s.port());
    auto today = [] {
        const std::time_t now = std::time(nullptr);
        std::tm utc{};
        gmtime_r(&now, &utc);
        char date[32];
        std::strftime(date, sizeof date, "%b %d %Y", &utc);
        return std::string(date);
    };
    const json msgs = json::array({{{"role", "user"}, {"content", "Hi"}}});
    const std::string before = today();
    const std::string plain = c.post("/apply-template", json{{"messages", msgs}}.dump()).json()["prompt"];
    const std::string after = today();
    INFO(plain);
    CHECK((plain.find("Today is " + before + ".") != std::string::npos ||
           plain.find("Today is " + after + ".") != std::string::npos));
    const json tools = json::array(
        {{{"type", "function"},
          {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}, {"properties", json::object()}}}}}}});
    const std::string with_tools =
        c.post("/apply-template", json{{"messages", msgs}, {"tools", tools}}.dump()).json()["prompt"];
    CHECK(with_tools.find("\"name\": \"get_weather\"") != std::string::npos);  // the tools, indented JSON
    const auto r = c.post("/v1/chat/completions", json{{"messages", msgs}, {"max_tokens", 4}}.dump());
    INFO(r.body);
    CHECK(r.status == 200);
    // Its call syntax, " functools[{...}]": a forced call comes back as a tool call.
    const json city = json::array({{{"type", "function"},
                                    {"function",
                                     {{"name", "get_weather"},
                                      {"parameters",
                                       {{"type", "object"},
                                        {"properties", {{"city", {{"type", "string"}, {"maxLength", 6}}}}},
                                        {"required", {"city"}},
                                        {"additionalProperties", false}}}}}}});
    const auto call = c.post("/v1/chat/completions", json{{"messages", msgs},
                                                          {"tools", city},
                                                          {"tool_choice", "required"},
                                                          {"parallel_tool_calls", false},
                                                          {"max_tokens", 120},
                                                          {"temperature", 0}}
                                                         .dump());
    INFO(call.body);
    REQUIRE(call.status == 200);
    const json answer = call.json();
    const json& m = answer["choices"][0]["message"];
    REQUIRE(m["tool_calls"].size() >= 1);
    CHECK(m["tool_calls"][0]["function"]["name"] == "get_weather");
    CHECK(json::parse(m["tool_calls"][0]["function"]["arguments"].get<std::string>())["city"].is_string());
}
