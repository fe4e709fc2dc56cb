// gpt-oss's Harmony replies end to end: stories260K served with gpt-oss's template. A request's grammar
// makes the model write Harmony markup (the analysis channel, then the final one); the reply comes back as
// reasoning_content and content, streamed and not, and with reasoning_format none as written. With a
// tool and tool_choice "required", the format's grammar forces a call to functions.NAME, returned as a
// tool call whose arguments follow the tool's schema.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "completion_util.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

ServerProcess& harmony_server() {
    static ServerProcess s({"-m", stories_model(), "-c", "2048", "-t", "1", "--chat-template-file",
                            shared_path("templates/openai-gpt-oss-120b.jinja")});
    return s;
}

json user(const std::string& text) {
    return json::array({{{"role", "user"}, {"content", text}}});
}

// The model's reply forced into Harmony's two channels, lowercase words in each.
const char* const kHarmonyGrammar =
    R"(root ::= "<|channel|>analysis<|message|>" words "<|end|><|start|>assistant<|channel|>final<|message|>" words
words ::= [a-z]{1,8} (" " [a-z]{1,8}){2,5})";

}  // namespace

TEST_CASE("gpt-oss: the analysis channel is reasoning_content and the final one the content",
          "[integration][harmony]") {
    Client c("127.0.0.1", harmony_server().port(), {std::chrono::seconds(120)});
    const json body = {{"messages", user("Say hello.")},
                       {"grammar", kHarmonyGrammar},
                       {"max_tokens", 200},
                       {"temperature", 0}};
    const auto r = c.post("/v1/chat/completions", body.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    const json msg = r.json()["choices"][0]["message"];
    const std::string reasoning = msg["reasoning_content"], content = msg["content"];
    CHECK(!reasoning.empty());
    CHECK(!content.empty());
    CHECK(reasoning.find("<|") == std::string::npos);
    CHECK(content.find("<|") == std::string::npos);

    // Streamed: the same reasoning and content.
    const auto s = completion_util::stream_chat(c, body);
    CHECK(s.complete);
    CHECK(s.reasoning == reasoning);
    CHECK(s.content == content);

    // reasoning_format none, as llama-server 0.7.0 answers it: the analysis as written, then the final text.
    json none = body;
    none["reasoning_format"] = "none";
    const auto raw = c.post("/v1/chat/completions", none.dump());
    REQUIRE(raw.status == 200);
    const std::string written = raw.json()["choices"][0]["message"]["content"];
    CHECK(written == "<|channel|>analysis<|message|>" + reasoning + "<|end|>" + content);
}

// A response format keeps Harmony's shape: the model may reason on the analysis channel first (stories260K
// does, and never ends it), and the value goes on the final channel. So the reasoning is reasoning_content,
// never content, and with reasoning_format none the reply starts with a channel header.
TEST_CASE("gpt-oss: a response format keeps the reply on Harmony's channels", "[integration][harmony]") {
    Client c("127.0.0.1", harmony_server().port(), {std::chrono::seconds(120)});
    json body = {{"messages", user("Give me a number.")},
                 {"response_format",
                  {{"type", "json_schema"},
                   {"json_schema",
                    {{"name", "n"},
                     {"schema",
                      {{"type", "object"},
                       {"properties", {{"n", {{"type", "integer"}}}}},
                       {"required", {"n"}},
                       {"additionalProperties", false}}}}}}},
                 {"max_tokens", 60},
                 {"temperature", 0}};
    const auto r = c.post("/v1/chat/completions", body.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    const json msg = r.json()["choices"][0]["message"];
    const std::string content = msg["content"].is_string() ? msg["content"].get<std::string>() : "";
    if (!content.empty()) CHECK(json::parse(content)["n"].is_number_integer());
    // stories260K at temperature 0 takes the analysis branch (it never writes "<|end|>" after it): the
    // reasoning is there, where a grammar forcing the value first (the other templates') would give none.
    CHECK(msg.contains("reasoning_content"));
    const auto s = completion_util::stream_chat(c, body);
    CHECK(s.complete);
    CHECK(s.content == content);
    if (msg.contains("reasoning_content")) CHECK(s.reasoning == msg["reasoning_content"]);
    body["reasoning_format"] = "none";
    const auto raw = c.post("/v1/chat/completions", body.dump());
    REQUIRE(raw.status == 200);
    const std::string written = raw.json()["choices"][0]["message"]["content"];
    CHECK(written.rfind("<|channel|>analysis<|message|>", 0) == 0);
}

TEST_CASE("gpt-oss: a forced call comes back as a tool call, streamed and not", "[integration][harmony]") {
    Client c("127.0.0.1", harmony_server().port(), {std::chrono::seconds(120)});
    const json tool = {{"type", "function"},
                       {"function",
                        {{"name", "get_weather"},
                         {"description", "Get the weather."},
                         {"parameters",
                          {{"type", "object"},
                           {"properties", {{"city", {{"type", "string"}, {"maxLength", 12}}}}},
                           {"required", {"city"}},
                           {"additionalProperties", false}}}}}};
    json body = {{"messages", user("What is the weather in Paris?")},
                 {"tools", json::array({tool})},
                 {"tool_choice", "required"},
                 {"parallel_tool_calls", false},
                 {"max_tokens", 300},
                 {"temperature", 1.0},
                 {"seed", 3}};
    const auto r = c.post("/v1/chat/completions", body.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    const json ch = r.json()["choices"][0];
    CHECK(ch["finish_reason"] == "tool_calls");
    REQUIRE(ch["message"]["tool_calls"].size() == 1);
    const json call = ch["message"]["tool_calls"][0];
    CHECK(call["function"]["name"] == "get_weather");
    const json args = json::parse(call["function"]["arguments"].get<std::string>());
    CHECK(args["city"].is_string());
    CHECK(args.size() == 1);
    CHECK((ch["message"]["content"].is_null() || ch["message"]["content"] == ""));

    // Streamed: the call's name once, its arguments in pieces, the same arguments.
    body["stream"] = true;
    std::string name, arguments;
    int names = 0;
    const auto sr =
        c.stream("POST", "/v1/chat/completions", body.dump(), {}, [&](const server::http::SseEvent& e) {
            if (e.data == "[DONE]") return true;
            const json j = json::parse(e.data);
            if (j["choices"].empty()) return true;
            const json& d = j["choices"][0]["delta"];
            if (d.contains("tool_calls"))
                for (const auto& tc : d["tool_calls"]) {
                    if (tc["function"].contains("name")) {
                        name = tc["function"]["name"];
                        ++names;
                    }
                    if (tc["function"].contains("arguments"))
                        arguments += tc["function"]["arguments"].get<std::string>();
                }
            return true;
        });
    REQUIRE(sr.complete);
    CHECK(names == 1);
    CHECK(name == "get_weather");
    CHECK(json::parse(arguments) == args);
}

// The Responses API counts the analysis channel's tokens as reasoning tokens (it looked for think tags and
// counted none). stories260K stays in its analysis message under a response format (see above).
TEST_CASE("gpt-oss: reasoning tokens are the analysis channel's", "[integration][harmony]") {
    Client c("127.0.0.1", harmony_server().port(), {std::chrono::seconds(120)});
    const json body = {
        {"input", "Give me a number."},
        {"max_output_tokens", 40},
        {"temperature", 0},
        {"text",
         {{"format",
           {{"type", "json_schema"},
            {"name", "n"},
            {"schema",
             {{"type", "object"}, {"properties", {{"n", {{"type", "integer"}}}}}, {"required", {"n"}}}}}}}}};
    const auto r = c.post("/v1/responses", body.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    const json reply = r.json();
    const json usage = reply["usage"];
    const int64_t reasoning = usage["output_tokens_details"]["reasoning_tokens"];
    CHECK(reasoning > 0);
    CHECK(reasoning <= usage["output_tokens"].get<int64_t>());
    bool has_reasoning_item = false;
    for (const auto& item : reply["output"]) has_reasoning_item |= item["type"] == "reasoning";
    CHECK(has_reasoning_item);
}

// As llama-server 0.7.0 reads the same forced replies: each channel's messages joined as written (spaces
// kept), nothing read after the final message, and a message to a function left out when the request
// offers no tools (neither a call nor the answer). Streamed and not.
TEST_CASE("gpt-oss: messages joined as written, the final one last, no call without tools",
          "[integration][harmony]") {
    Client c("127.0.0.1", harmony_server().port(), {std::chrono::seconds(120)});
    const std::string S = "<|end|><|start|>assistant";
    const std::string reply = "<|channel|>analysis<|message|> x " + S +
                              "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}" + S +
                              "<|channel|>analysis<|message|>y" + S + "<|channel|>commentary<|message|>pre" +
                              S + "<|channel|>final<|message|> a " + S + "<|channel|>final<|message|>b";
    std::string literal;
    for (char ch : reply) literal += ch == '"' ? std::string("\\\"") : std::string(1, ch);
    const json body = {{"messages", user("Say hello.")},
                       {"grammar", "root ::= \"" + literal + "\""},
                       {"max_tokens", 400},
                       {"temperature", 0}};
    const auto r = c.post("/v1/chat/completions", body.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    const json choice = r.json()["choices"][0];
    CHECK(choice["finish_reason"] == "stop");
    CHECK(choice["message"]["reasoning_content"] == " x y");
    CHECK(choice["message"]["content"] == "pre a ");
    CHECK(!choice["message"].contains("tool_calls"));
    const auto s = completion_util::stream_chat(c, body);
    CHECK(s.complete);
    CHECK(s.reasoning == " x y");
    CHECK(s.content == "pre a ");
}

// A continued assistant turn (assistant prefill) is rendered by the template with its reasoning: the
// analysis message before the final one, empty without reasoning, as llama-server 0.7.0 renders it.
TEST_CASE("gpt-oss: a continued turn keeps its analysis message", "[integration][harmony]") {
    Client c("127.0.0.1", harmony_server().port(), {std::chrono::seconds(120)});
    for (const json& reasoning : {json(), json("think")}) {
        json turn = {{"role", "assistant"}, {"content", "Sure,"}};
        if (!reasoning.is_null()) turn["reasoning_content"] = reasoning;
        json messages = user("Hi.");
        messages.push_back(turn);
        const auto r = c.post("/apply-template", json{{"messages", messages}}.dump());
        REQUIRE(r.status == 200);
        const std::string prompt = r.json()["prompt"];
        const std::string want =
            "<|start|>user<|message|>Hi.<|end|><|start|>assistant<|channel|>analysis<|message|>" +
            (reasoning.is_null() ? std::string() : reasoning.get<std::string>()) +
            "<|end|><|start|>assistant<|channel|>final<|message|>Sure,";
        CHECK(prompt.ends_with(want));
    }
}
