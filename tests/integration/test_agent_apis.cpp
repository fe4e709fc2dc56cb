// The agent APIs against the real binary: POST /v1/responses (OpenAI Responses) and POST /v1/messages
// (Anthropic Messages), with their token-counting endpoints. stories260K with Qwen 2.5's template: text
// equals /v1/chat/completions' for the same conversation (greedy), streamed equals non-streamed and the
// event sequences follow the APIs' rules; tool_choice required / named force calls whose arguments an
// independent validator (python3-jsonschema) checks; function_call_output / tool_result turns render into
// the prompt (the same prompt as the equivalent chat conversation, checked through token counts and
// greedy output); stop sequences, token limits, usage, thinking budgets, prefill, structured output; bad
// input is a 400 in each API's error shape; x-api-key authenticates.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "checker_util.h"
#include "server/http/client.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;
using server::http::SseEvent;

namespace {

ServerProcess& agent_server() {
    static ServerProcess s({"-m", stories_model(), "-c", "2048", "-t", "1", "--chat-template-file",
                            shared_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja")});
    return s;
}

Client client(uint16_t port) {
    return Client("127.0.0.1", port, {std::chrono::seconds(120)});
}

const char* const kSchema = R"({"type": "object", "properties": {
    "city": {"type": "string", "minLength": 1, "maxLength": 12},
    "days": {"type": "integer", "minimum": 1, "maximum": 7}},
    "required": ["city", "days"], "additionalProperties": false})";

json responses_tools() {
    return json::array(
        {{{"type", "function"},
          {"name", "get_weather"},
          {"description", "Get the weather."},
          {"parameters", json::parse(kSchema)}},
         {{"type", "function"},
          {"name", "get_time"},
          {"parameters", {{"type", "object"}, {"properties", {{"zone", {{"type", "string"}}}}}}}}});
}

json messages_tools() {
    return json::array(
        {{{"name", "get_weather"},
          {"description", "Get the weather."},
          {"input_schema", json::parse(kSchema)}},
         {{"name", "get_time"},
          {"input_schema", {{"type", "object"}, {"properties", {{"zone", {{"type", "string"}}}}}}}}});
}

struct Events {
    std::vector<SseEvent> list;
    int status = 0;
    std::string body;
};

Events stream(Client& c, const std::string& path, const json& body,
              const server::http::Headers& headers = {}) {
    Events out;
    const auto r = c.stream("POST", path, body.dump(), headers, [&](const SseEvent& e) {
        out.list.push_back(e);
        return true;
    });
    out.status = r.status;
    out.body = r.body;
    REQUIRE(r.complete);
    return out;
}

// The chat completions reply's text for the same conversation (`extra` in its key order: tools).
std::string chat_text(Client& c, const json& messages, int max_tokens,
                      nlohmann::ordered_json extra = nlohmann::ordered_json::object()) {
    nlohmann::ordered_json body = {{"messages", messages}, {"max_tokens", max_tokens}, {"temperature", 0}};
    for (const auto& [k, v] : extra.items()) body[k] = v;
    const auto r = c.post("/v1/chat/completions", body.dump());
    REQUIRE(r.status == 200);
    return r.json()["choices"][0]["message"]["content"];
}

// The output_text of a response object (what the SDKs call output_text).
std::string output_text(const json& response) {
    std::string text;
    for (const auto& item : response["output"])
        if (item["type"] == "message")
            for (const auto& part : item["content"])
                if (part["type"] == "output_text") text += part["text"].get<std::string>();
    return text;
}

std::string text_blocks(const json& message) {
    std::string text;
    for (const auto& b : message["content"])
        if (b["type"] == "text") text += b["text"].get<std::string>();
    return text;
}

// Checks a Responses event stream against the API's rules and returns the final response object.
json check_responses_stream(const Events& ev) {
    REQUIRE(ev.status == 200);
    REQUIRE(ev.list.size() >= 3);
    int64_t seq = 0;
    std::vector<std::string> names;
    for (const auto& e : ev.list) {
        const json d = json::parse(e.data);
        INFO(e.event << " " << e.data);
        CHECK(d["type"] == e.event);  // every event is named, and the name is the data's type
        CHECK(d["sequence_number"] == seq++);
        names.push_back(e.event);
    }
    CHECK(names[0] == "response.created");
    CHECK(names[1] == "response.in_progress");
    const std::string last = names.back();
    CHECK((last == "response.completed" || last == "response.incomplete"));
    // Items open and close in order; deltas belong to the open item and add up to its final text.
    json open_item;
    std::string text;
    json done_items = json::array();
    for (size_t i = 2; i + 1 < ev.list.size(); ++i) {
        const json d = json::parse(ev.list[i].data);
        const std::string& n = names[i];
        INFO(n << " " << ev.list[i].data);
        if (n == "response.output_item.added") {
            REQUIRE(open_item.is_null());
            CHECK(d["output_index"] == done_items.size());
            open_item = d["item"];
            text.clear();
        } else if (n == "response.output_item.done") {
            REQUIRE(!open_item.is_null());
            CHECK(d["item"]["id"] == open_item["id"]);
            done_items.push_back(d["item"]);
            open_item = json();
        } else if (n == "response.output_text.delta" || n == "response.reasoning_text.delta" ||
                   n == "response.function_call_arguments.delta") {
            REQUIRE(!open_item.is_null());
            CHECK(d["item_id"] == open_item["id"]);
            CHECK(d["output_index"] == done_items.size());
            text += d["delta"].get<std::string>();
        } else if (n == "response.output_text.done" || n == "response.reasoning_text.done") {
            CHECK(d["text"] == text);
        } else if (n == "response.function_call_arguments.done") {
            CHECK(d["arguments"] == text);
        } else {
            CHECK((n == "response.content_part.added" || n == "response.content_part.done"));
            CHECK(d["item_id"] == open_item["id"]);
        }
    }
    CHECK(open_item.is_null());
    const json final_response = json::parse(ev.list.back().data)["response"];
    CHECK(final_response["output"] == done_items);
    return final_response;
}

// Checks a Messages event stream and reassembles the message (content blocks, stop reason, usage).
json check_messages_stream(const Events& ev) {
    REQUIRE(ev.status == 200);
    REQUIRE(ev.list.size() >= 4);
    CHECK(ev.list[0].event == "message_start");
    CHECK(ev.list[1].event == "ping");
    CHECK(ev.list[ev.list.size() - 2].event == "message_delta");
    CHECK(ev.list.back().event == "message_stop");
    json msg = json::parse(ev.list[0].data)["message"];
    int open = -1;
    std::string partial_json;
    for (size_t i = 2; i + 2 < ev.list.size(); ++i) {
        const json d = json::parse(ev.list[i].data);
        INFO(ev.list[i].event << " " << ev.list[i].data);
        CHECK(d["type"] == ev.list[i].event);
        if (ev.list[i].event == "content_block_start") {
            REQUIRE(open == -1);
            CHECK(d["index"] == msg["content"].size());
            open = d["index"];
            msg["content"].push_back(d["content_block"]);
            partial_json.clear();
        } else if (ev.list[i].event == "content_block_delta") {
            REQUIRE(d["index"] == open);
            json& b = msg["content"][(size_t)open];
            const json& delta = d["delta"];
            if (delta["type"] == "text_delta")
                b["text"] = b["text"].get<std::string>() + delta["text"].get<std::string>();
            if (delta["type"] == "thinking_delta")
                b["thinking"] = b["thinking"].get<std::string>() + delta["thinking"].get<std::string>();
            if (delta["type"] == "signature_delta") b["signature"] = delta["signature"];
            if (delta["type"] == "input_json_delta") partial_json += delta["partial_json"].get<std::string>();
        } else {
            REQUIRE(ev.list[i].event == "content_block_stop");
            REQUIRE(d["index"] == open);
            json& b = msg["content"][(size_t)open];
            if (b["type"] == "tool_use") b["input"] = json::parse(partial_json);
            open = -1;
        }
    }
    CHECK(open == -1);
    const json delta = json::parse(ev.list[ev.list.size() - 2].data);
    msg["stop_reason"] = delta["delta"]["stop_reason"];
    msg["stop_sequence"] = delta["delta"]["stop_sequence"];
    msg["usage"] = delta["usage"];
    return msg;
}

json user_messages(const std::string& text) {
    return json::array({{{"role", "user"}, {"content", text}}});
}

json tokenize_count(Client& c, const std::string& text) {
    const auto r = c.post("/tokenize", json{{"content", text}, {"add_special", true}}.dump());
    REQUIRE(r.status == 200);
    return r.json()["tokens"].size();
}

}  // namespace

TEST_CASE("agent APIs: greedy text equals chat completions', streamed equals non-streamed, usage",
          "[integration][agent]") {
    Client c = client(agent_server().port());
    for (const std::string prompt : {"Once upon a time", "Lily wanted a red ball"}) {
        INFO(prompt);
        const std::string chat = chat_text(c, user_messages(prompt), 24);
        const auto chat_r =
            c.post("/v1/chat/completions",
                   json{{"messages", user_messages(prompt)}, {"max_tokens", 24}, {"temperature", 0}}.dump());
        const json chat_usage = chat_r.json()["usage"];

        // Responses: a string input, and the same as a message item.
        const json rbody = {{"input", prompt}, {"max_output_tokens", 24}, {"temperature", 0}};
        const auto r = c.post("/v1/responses", rbody.dump());
        REQUIRE(r.status == 200);
        const json resp = r.json();
        INFO(resp.dump());
        CHECK(resp["object"] == "response");
        CHECK(resp["id"].get<std::string>().rfind("resp_", 0) == 0);
        CHECK(output_text(resp) == chat);
        CHECK(resp["usage"]["input_tokens"] == chat_usage["prompt_tokens"]);
        CHECK(resp["usage"]["output_tokens"] == chat_usage["completion_tokens"]);
        CHECK(resp["usage"]["total_tokens"] == chat_usage["total_tokens"]);
        json items = rbody;
        items["input"] =
            json::array({{{"type", "message"},
                          {"role", "user"},
                          {"content", json::array({{{"type", "input_text"}, {"text", prompt}}})}}});
        CHECK(output_text(c.post("/v1/responses", items.dump()).json()) == chat);
        CHECK(output_text(c.post("/responses", items.dump()).json()) == chat);  // llama-server's alias
        const auto count = c.post("/v1/responses/input_tokens", json{{"input", prompt}}.dump());
        REQUIRE(count.status == 200);
        CHECK(c.post("/responses/input_tokens", json{{"input", prompt}}.dump()).json() == count.json());
        CHECK(count.json() ==
              json{{"object", "response.input_tokens"}, {"input_tokens", chat_usage["prompt_tokens"]}});
        // The chat request itself, counted without generating (llama-server's input_tokens for chat).
        const auto chat_count = c.post("/v1/chat/completions/input_tokens",
                                       json{{"messages", user_messages(prompt)}, {"max_tokens", 24}}.dump());
        REQUIRE(chat_count.status == 200);
        CHECK(chat_count.json() ==
              json{{"object", "response.input_tokens"}, {"input_tokens", chat_usage["prompt_tokens"]}});
        CHECK(c.post("/v1/chat/completions/input_tokens", json{{"messages", json::array()}}.dump()).status == 400);
        const auto audio = c.post("/v1/audio/transcriptions", "{}");  // text models only, said so
        CHECK(audio.status == 501);
        CHECK(audio.json()["error"]["message"].get<std::string>().find("text models") != std::string::npos);

        json srbody = rbody;
        srbody["stream"] = true;
        const json streamed = check_responses_stream(stream(c, "/v1/responses", srbody));
        CHECK(output_text(streamed) == chat);
        CHECK(streamed["status"] == resp["status"]);
        CHECK(streamed["usage"]["output_tokens"] == resp["usage"]["output_tokens"]);

        // Messages.
        const json mbody = {{"model", "stories"},
                            {"max_tokens", 24},
                            {"temperature", 0},
                            {"messages", user_messages(prompt)}};
        const auto m = c.post("/v1/messages", mbody.dump());
        REQUIRE(m.status == 200);
        const json msg = m.json();
        INFO(msg.dump());
        CHECK(msg["type"] == "message");
        CHECK(msg["role"] == "assistant");
        CHECK(msg["id"].get<std::string>().rfind("msg_", 0) == 0);
        CHECK(text_blocks(msg) == chat);
        CHECK(msg["stop_reason"] == "max_tokens");
        CHECK(msg["usage"]["output_tokens"] == 24);
        const auto mcount = c.post("/v1/messages/count_tokens",
                                   json{{"model", "stories"}, {"messages", user_messages(prompt)}}.dump());
        REQUIRE(mcount.status == 200);
        CHECK(mcount.json() == json{{"input_tokens", chat_usage["prompt_tokens"]}});
        // Anthropic's input_tokens leave out what the cache supplied.
        CHECK(msg["usage"]["input_tokens"].get<int64_t>() +
                  msg["usage"]["cache_read_input_tokens"].get<int64_t>() ==
              chat_usage["prompt_tokens"]);
        json block_body = mbody;
        block_body["messages"][0]["content"] = json::array({{{"type", "text"}, {"text", prompt}}});
        CHECK(text_blocks(c.post("/v1/messages", block_body.dump()).json()) == chat);

        json smbody = mbody;
        smbody["stream"] = true;
        const Events sev = stream(c, "/v1/messages", smbody);
        const json smsg = check_messages_stream(sev);
        CHECK(smsg["content"] == msg["content"]);
        CHECK(smsg["stop_reason"] == msg["stop_reason"]);
        CHECK(smsg["usage"]["output_tokens"] == msg["usage"]["output_tokens"]);
        // The same prompt again: message_start already splits it, what the cache supplied and the rest
        // (llama-server 0.7.0 sends it so; the final usage says the same).
        const json start_usage = json::parse(sev.list[0].data)["message"]["usage"];
        INFO(start_usage.dump());
        CHECK(start_usage["cache_read_input_tokens"].get<int64_t>() > 0);
        CHECK(start_usage["input_tokens"].get<int64_t>() + start_usage["cache_read_input_tokens"].get<int64_t>() ==
              chat_usage["prompt_tokens"]);
        CHECK(start_usage["cache_read_input_tokens"] == smsg["usage"]["cache_read_input_tokens"]);
    }
}

// Fields Codex and Claude Code send that this server cannot act on: llama-server ignores them, and a
// refusal failed every request of such a session. The reply equals the same request without them.
TEST_CASE("agent APIs: what Codex and Claude Code send beside the conversation is accepted", "[integration][agent]") {
    Client c = client(agent_server().port());
    const json rbody = {{"input", "Once upon a time"}, {"max_output_tokens", 16}, {"temperature", 0}};
    const std::string plain = output_text(c.post("/v1/responses", rbody.dump()).json());
    json codex = rbody;
    codex["include"] = {"reasoning.encrypted_content"};
    codex["reasoning"] = {{"summary", "auto"}};
    codex["context_management"] = json::array({{{"type", "compaction"}, {"compact_threshold", 100000}}});
    codex["client_metadata"] = {{"session", "s"}};  // fields this server does not know are ignored,
    codex["max_tokens"] = 2;                          // also chat completions' own (not copied over)
    codex["messages"] = json::array();
    codex["store"] = true;  // nothing is stored (the echo says so), as in llama-server
    codex["text"] = {{"verbosity", "low"}};
    // Codex's tools of other types are left out of the prompt, as llama-server leaves them out.
    codex["tools"] = json::array({{{"type", "custom"}, {"name", "apply_patch"}, {"description", "Patch files."},
                                   {"format", {{"type", "grammar"}, {"syntax", "lark"}, {"definition", "start: /.+/"}}}},
                                  {{"type", "local_shell"}},
                                  {{"type", "web_search"}}});
    const auto r = c.post("/v1/responses", codex.dump());
    INFO(r.body.substr(0, 300));
    REQUIRE(r.status == 200);
    CHECK(output_text(r.json()) == plain);
    CHECK(r.json()["store"] == false);

    const json mbody = {{"model", "m"},
                        {"max_tokens", 16},
                        {"temperature", 0},
                        {"messages", {{{"role", "user"}, {"content", "Once upon a time"}}}}};
    const json plain_m = c.post("/v1/messages", mbody.dump()).json()["content"];
    json claude = mbody;
    claude["context_management"] = {{"edits", json::array({{{"type", "clear_tool_uses_20250919"}}})}};
    claude["betas"] = {"context-management-2025-06-27"};
    const auto m = c.post("/v1/messages", claude.dump());
    INFO(m.body.substr(0, 300));
    REQUIRE(m.status == 200);
    CHECK(m.json()["content"] == plain_m);
}

// tool_choice "none" means "do not call them", not "they do not exist": the tools stay in the prompt
// (llama-server's prompt too), so the reply and the cached prefix do not change with it.
TEST_CASE("agent APIs: tool_choice none keeps the tools in the prompt", "[integration][agent]") {
    Client c = client(agent_server().port());
    const auto prompt_tokens = [&](const json& choice) {
        json body = {{"input", "What is the weather in Paris?"}, {"max_output_tokens", 1}, {"tools", responses_tools()}};
        if (!choice.is_null()) body["tool_choice"] = choice;
        const auto r = c.post("/v1/responses", body.dump());
        REQUIRE(r.status == 200);
        return r.json()["usage"]["input_tokens"].get<int>();
    };
    const int bare = c.post("/v1/responses", json{{"input", "What is the weather in Paris?"}, {"max_output_tokens", 1}}.dump())
                         .json()["usage"]["input_tokens"]
                         .get<int>();
    CHECK(prompt_tokens("none") == prompt_tokens(nullptr));
    CHECK(prompt_tokens("none") > bare);
}

TEST_CASE("agent APIs: instructions and system become the system message", "[integration][agent]") {
    Client c = client(agent_server().port());
    const json chat_messages = json::array({{{"role", "system"}, {"content", "You tell stories."}},
                                            {{"role", "user"}, {"content", "Once upon a time"}}});
    const std::string chat = chat_text(c, chat_messages, 16);
    const auto r = c.post("/v1/responses", json{{"instructions", "You tell stories."},
                                                {"input", "Once upon a time"},
                                                {"max_output_tokens", 16},
                                                {"temperature", 0}}
                                               .dump());
    REQUIRE(r.status == 200);
    CHECK(output_text(r.json()) == chat);
    CHECK(r.json()["instructions"] == "You tell stories.");
    const auto m = c.post("/v1/messages",
                          json{{"model", "m"},
                               {"system", json::array({{{"type", "text"}, {"text", "You tell stories."}}})},
                               {"messages", user_messages("Once upon a time")},
                               {"max_tokens", 16},
                               {"temperature", 0}}
                              .dump());
    REQUIRE(m.status == 200);
    CHECK(text_blocks(m.json()) == chat);

    // As llama-server restates them: a developer item is a system message of its own after the
    // instructions, and system blocks run together.
    const std::string two = chat_text(c,
                                      json::array({{{"role", "system"}, {"content", "You tell stories."}},
                                                   {{"role", "system"}, {"content", "Short ones."}},
                                                   {{"role", "user"}, {"content", "Once upon a time"}}}),
                                      16);
    const auto rd = c.post("/v1/responses",
                           json{{"instructions", "You tell stories."},
                                {"input", json::array({{{"role", "developer"}, {"content", "Short ones."}},
                                                       {{"role", "user"}, {"content", "Once upon a time"}}})},
                                {"max_output_tokens", 16},
                                {"temperature", 0}}
                               .dump());
    REQUIRE(rd.status == 200);
    CHECK(output_text(rd.json()) == two);
    const std::string joined = chat_text(c,
                                         json::array({{{"role", "system"}, {"content", "You tell stories. Short ones."}},
                                                      {{"role", "user"}, {"content", "Once upon a time"}}}),
                                         16);
    const auto mb = c.post("/v1/messages",
                           json{{"model", "m"},
                                {"system", json::array({{{"type", "text"}, {"text", "You tell stories. "}},
                                                        {{"type", "text"}, {"text", "Short ones."}}})},
                                {"messages", user_messages("Once upon a time")},
                                {"max_tokens", 16},
                                {"temperature", 0}}
                               .dump());
    REQUIRE(mb.status == 200);
    CHECK(text_blocks(mb.json()) == joined);
}

TEST_CASE("agent APIs: tool_choice required and named force calls that follow the schema, streamed and not",
          "[integration][agent][tools]") {
    Client c = client(agent_server().port());
    json cases = json::array();
    const auto schema_of = [](const std::string& name) {
        return name == "get_weather" ? json::parse(kSchema) : responses_tools()[1]["parameters"];
    };
    for (int seed = 1; seed <= 3; ++seed) {
        INFO("seed " << seed);
        for (const json& choice : {json("required"), json{{"type", "function"}, {"name", "get_weather"}}}) {
            INFO("tool_choice " << choice.dump());
            json body = {{"input", "What is the weather in Paris?"},
                         {"tools", responses_tools()},
                         {"tool_choice", choice},
                         {"parallel_tool_calls", false},
                         {"temperature", 1.0},
                         {"seed", seed},
                         {"max_output_tokens", 300}};
            const auto r = c.post("/v1/responses", body.dump());
            REQUIRE(r.status == 200);
            const json resp = r.json();
            INFO(resp.dump());
            CHECK(resp["status"] == "completed");
            CHECK(resp["tools"] == responses_tools());
            CHECK(resp["tool_choice"] == choice);
            std::vector<json> calls;
            for (const auto& item : resp["output"])
                if (item["type"] == "function_call") calls.push_back(item);
            REQUIRE(calls.size() == 1);
            CHECK(calls[0]["call_id"].get<std::string>().rfind("call_", 0) == 0);
            CHECK(calls[0]["id"].get<std::string>().rfind("fc_", 0) == 0);
            CHECK(calls[0]["status"] == "completed");
            if (choice.is_object()) CHECK(calls[0]["name"] == "get_weather");
            cases.push_back({{"schema", schema_of(calls[0]["name"])}, {"text", calls[0]["arguments"]}});

            body["stream"] = true;
            const json streamed = check_responses_stream(stream(c, "/v1/responses", body));
            CHECK(streamed["output"].back()["type"] == "function_call");
            CHECK(streamed["output"].back()["arguments"] == calls[0]["arguments"]);  // same seed, same call
            CHECK(streamed["output"].back()["name"] == calls[0]["name"]);
        }
        for (const json& choice :
             {json{{"type", "any"}, {"disable_parallel_tool_use", true}},
              json{{"type", "tool"}, {"name", "get_weather"}, {"disable_parallel_tool_use", true}}}) {
            INFO("tool_choice " << choice.dump());
            json body = {{"model", "m"},
                         {"messages", user_messages("What is the weather in Paris?")},
                         {"tools", messages_tools()},
                         {"tool_choice", choice},
                         {"temperature", 1.0},
                         {"seed", seed},
                         {"max_tokens", 300}};
            const auto r = c.post("/v1/messages", body.dump());
            REQUIRE(r.status == 200);
            const json msg = r.json();
            INFO(msg.dump());
            CHECK(msg["stop_reason"] == "tool_use");
            std::vector<json> uses;
            for (const auto& b : msg["content"])
                if (b["type"] == "tool_use") uses.push_back(b);
            REQUIRE(uses.size() == 1);
            CHECK(uses[0]["id"].get<std::string>().rfind("toolu_", 0) == 0);
            CHECK(uses[0]["input"].is_object());
            if (choice["type"] == "tool") CHECK(uses[0]["name"] == "get_weather");
            cases.push_back({{"schema", schema_of(uses[0]["name"])}, {"text", uses[0]["input"].dump()}});

            body["stream"] = true;
            const json streamed = check_messages_stream(stream(c, "/v1/messages", body));
            CHECK(streamed["stop_reason"] == "tool_use");
            CHECK(streamed["content"].back()["type"] == "tool_use");
            CHECK(streamed["content"].back()["input"] == uses[0]["input"]);
            CHECK(streamed["content"].back()["name"] == uses[0]["name"]);
        }
    }
    const json verdicts = run_checker("validate_json_outputs.py", cases);
    REQUIRE(verdicts.size() == cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO(cases[i].dump() << "\n" << verdicts[i]["why"]);
        CHECK(verdicts[i]["ok"] == true);
    }
}

TEST_CASE(
    "agent APIs: a function_call_output / tool_result turn renders as the chat conversation's tool message",
    "[integration][agent][tools]") {
    Client c = client(agent_server().port());
    const std::string args = R"({"city": "Paris", "days": 2})";
    const std::string result = "Sunny and 24 degrees in Paris";
    // The conversation as /v1/chat/completions takes it.
    const json chat_messages = json::array(
        {{{"role", "user"}, {"content", "Weather in Paris?"}},
         {{"role", "assistant"},
          {"content", ""},
          {"tool_calls", json::array({{{"id", "call_1"},
                                       {"type", "function"},
                                       {"function", {{"name", "get_weather"}, {"arguments", args}}}}})}},
         {{"role", "tool"}, {"tool_call_id", "call_1"}, {"name", "get_weather"}, {"content", result}}});
    // The tools as chat completions takes them: a function's name, description ("" when it has none) and
    // parameters, in that order, which is how the agent APIs restate theirs (as llama-server does).
    nlohmann::ordered_json chat_tools = nlohmann::ordered_json::array();
    for (const auto& t : responses_tools()) {
        nlohmann::ordered_json fn = {{"name", t["name"]}};
        fn["description"] = t.contains("description") ? t["description"] : json("");
        fn["parameters"] = t["parameters"];
        chat_tools.push_back({{"type", "function"}, {"function", fn}});
    }
    const auto tmpl = c.post(
        "/apply-template", nlohmann::ordered_json{{"messages", chat_messages}, {"tools", chat_tools}}.dump());
    REQUIRE(tmpl.status == 200);
    const std::string prompt = tmpl.json()["prompt"];
    INFO(prompt);
    REQUIRE(prompt.find(result) != std::string::npos);       // the template shows the tool result...
    REQUIRE(prompt.find("\"Paris\"") != std::string::npos);  // ...and the call
    const json expected_tokens = tokenize_count(c, prompt);
    const std::string chat = chat_text(c, chat_messages, 20, {{"tools", chat_tools}});

    const json input = json::array(
        {{{"role", "user"}, {"content", "Weather in Paris?"}},
         {{"type", "function_call"}, {"call_id", "call_1"}, {"name", "get_weather"}, {"arguments", args}},
         {{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", result}}});
    const auto count =
        c.post("/v1/responses/input_tokens", json{{"input", input}, {"tools", responses_tools()}}.dump());
    REQUIRE(count.status == 200);
    CHECK(count.json()["input_tokens"] == expected_tokens);
    const auto r = c.post(
        "/v1/responses",
        json{{"input", input}, {"tools", responses_tools()}, {"max_output_tokens", 20}, {"temperature", 0}}
            .dump());
    REQUIRE(r.status == 200);
    CHECK(output_text(r.json()) == chat);
    CHECK(r.json()["usage"]["input_tokens"] == expected_tokens);

    const json messages = json::array(
        {{{"role", "user"}, {"content", "Weather in Paris?"}},
         {{"role", "assistant"},
          {"content", json::array({{{"type", "tool_use"},
                                    {"id", "call_1"},
                                    {"name", "get_weather"},
                                    {"input", json::parse(args)}}})}},
         {{"role", "user"},
          {"content", json::array({{{"type", "tool_result"},
                                    {"tool_use_id", "call_1"},
                                    {"content", json::array({{{"type", "text"}, {"text", result}}})}}})}}});
    const auto mcount =
        c.post("/v1/messages/count_tokens",
               json{{"model", "m"}, {"messages", messages}, {"tools", messages_tools()}}.dump());
    REQUIRE(mcount.status == 200);
    CHECK(mcount.json()["input_tokens"] == expected_tokens);
    const auto m = c.post("/v1/messages", json{{"model", "m"},
                                               {"messages", messages},
                                               {"tools", messages_tools()},
                                               {"max_tokens", 20},
                                               {"temperature", 0}}
                                              .dump());
    REQUIRE(m.status == 200);
    CHECK(text_blocks(m.json()) == chat);

    // A different result changes the prompt: the result really is in it.
    json other = input;
    other[2]["output"] = result + result;
    CHECK(c.post("/v1/responses/input_tokens", json{{"input", other}, {"tools", responses_tools()}}.dump())
              .json()["input_tokens"] > expected_tokens);
}

TEST_CASE("agent APIs: stop sequences and token limits set the stop reason", "[integration][agent]") {
    Client c = client(agent_server().port());
    const json base = {{"model", "m"},
                       {"messages", user_messages("Once upon a time")},
                       {"max_tokens", 40},
                       {"temperature", 0}};
    const json full = c.post("/v1/messages", base.dump()).json();
    const std::string text = text_blocks(full);
    INFO(text);
    REQUIRE(text.size() > 20);
    const std::string stop = text.substr(12, 3);
    const size_t at = text.find(stop);
    json body = base;
    body["stop_sequences"] = json::array({stop, "never appears"});
    const json stopped = c.post("/v1/messages", body.dump()).json();
    INFO(stopped.dump());
    CHECK(stopped["stop_reason"] == "stop_sequence");
    CHECK(stopped["stop_sequence"] == stop);
    CHECK(text_blocks(stopped) == text.substr(0, at));
    body["stream"] = true;
    const json sstopped = check_messages_stream(stream(c, "/v1/messages", body));
    CHECK(sstopped["stop_reason"] == "stop_sequence");
    CHECK(sstopped["stop_sequence"] == stop);
    CHECK(text_blocks(sstopped) == text.substr(0, at));

    json limited = base;
    limited["max_tokens"] = 5;
    const json lm = c.post("/v1/messages", limited.dump()).json();
    CHECK(lm["stop_reason"] == "max_tokens");
    CHECK(lm["stop_sequence"].is_null());
    CHECK(lm["usage"]["output_tokens"] == 5);

    // Responses: llama.cpp's `stop` field; a reply that stops by itself is completed, a limited one
    // incomplete.
    const json rstop = c.post("/v1/responses", json{{"input", "Once upon a time"},
                                                    {"max_output_tokens", 40},
                                                    {"temperature", 0},
                                                    {"stop", stop}}
                                                   .dump())
                           .json();
    CHECK(rstop["status"] == "completed");
    CHECK(rstop["incomplete_details"].is_null());
    CHECK(rstop["output"][0]["status"] == "completed");
    CHECK(output_text(rstop) == text.substr(0, at));
    const json rlim =
        c.post("/v1/responses",
               json{{"input", "Once upon a time"}, {"max_output_tokens", 5}, {"temperature", 0}}.dump())
            .json();
    CHECK(rlim["status"] == "incomplete");
    CHECK(rlim["incomplete_details"]["reason"] == "max_output_tokens");
    CHECK(rlim["usage"]["output_tokens"] == 5);
}

TEST_CASE("agent APIs: a final assistant message is a prefill the reply continues", "[integration][agent]") {
    Client c = client(agent_server().port());
    const auto tmpl = c.post("/apply-template", json{{"messages", user_messages("Tell me a story")}}.dump());
    REQUIRE(tmpl.status == 200);
    const std::string prompt = tmpl.json()["prompt"].get<std::string>() + "Once upon a time";
    json body = {{"model", "m"},
                 {"max_tokens", 16},
                 {"temperature", 0},
                 {"messages", json::array({{{"role", "user"}, {"content", "Tell me a story"}},
                                           {{"role", "assistant"}, {"content", "Once upon a time"}}})}};
    json count_body = body;
    count_body.erase("max_tokens");
    count_body.erase("temperature");
    CHECK(c.post("/v1/messages/count_tokens", count_body.dump()).json()["input_tokens"] ==
          tokenize_count(c, prompt));
    // The same prompt through /completion gives the same continuation, without the prefill in it.
    const auto native =
        c.post("/completion", json{{"prompt", prompt}, {"n_predict", 16}, {"temperature", 0}}.dump());
    REQUIRE(native.status == 200);
    const json m = c.post("/v1/messages", body.dump()).json();
    INFO(m.dump());
    CHECK(text_blocks(m) == native.json()["content"]);
}

TEST_CASE("agent APIs: structured output through text.format and output_config.format",
          "[integration][agent]") {
    Client c = client(agent_server().port());
    json cases = json::array();
    for (int seed = 1; seed <= 2; ++seed) {
        const auto r = c.post(
            "/v1/responses",
            json{{"input", "Weather?"},
                 {"seed", seed},
                 {"temperature", 1.0},
                 {"max_output_tokens", 300},
                 {"text",
                  {{"format",
                    {{"type", "json_schema"}, {"name", "weather"}, {"schema", json::parse(kSchema)}}}}}}
                .dump());
        REQUIRE(r.status == 200);
        CHECK(r.json()["text"]["format"]["name"] == "weather");
        cases.push_back({{"schema", json::parse(kSchema)}, {"text", output_text(r.json())}});
        const auto m = c.post(
            "/v1/messages",
            json{{"model", "m"},
                 {"messages", user_messages("Weather?")},
                 {"seed", seed},
                 {"temperature", 1.0},
                 {"max_tokens", 300},
                 {"output_config", {{"format", {{"type", "json_schema"}, {"schema", json::parse(kSchema)}}}}}}
                .dump());
        REQUIRE(m.status == 200);
        cases.push_back({{"schema", json::parse(kSchema)}, {"text", text_blocks(m.json())}});
    }
    const json verdicts = run_checker("validate_json_outputs.py", cases);
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO(cases[i].dump() << "\n" << verdicts[i]["why"]);
        CHECK(verdicts[i]["ok"] == true);
    }
}

TEST_CASE("agent APIs: reasoning comes back as reasoning items and thinking blocks, budget_tokens limits it",
          "[integration][agent][reasoning]") {
    char path[] = "/tmp/ggserve_agent_think_XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    const std::string tmpl = "{% for m in messages %}{{ m.content }}\n{% endfor %}<think>\n";
    REQUIRE(write(fd, tmpl.data(), tmpl.size()) == (ssize_t)tmpl.size());
    close(fd);
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--chat-template-file", path});
    std::remove(path);
    Client c = client(s.port());

    // Without a budget stories260K never closes the block: all reasoning, no text.
    json body = {{"model", "m"},
                 {"messages", user_messages("Once upon a time")},
                 {"max_tokens", 30},
                 {"temperature", 0}};
    const json unlimited = c.post("/v1/messages", body.dump()).json();
    INFO(unlimited.dump());
    REQUIRE(unlimited["content"].size() == 1);
    REQUIRE(unlimited["content"][0]["type"] == "thinking");
    const std::string all_thinking = unlimited["content"][0]["thinking"];
    CHECK(unlimited["stop_reason"] == "max_tokens");

    body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 6}};
    const json limited = c.post("/v1/messages", body.dump()).json();
    INFO(limited.dump());
    REQUIRE(limited["content"].size() == 2);
    CHECK(limited["content"][0]["type"] == "thinking");
    CHECK(limited["content"][1]["type"] == "text");  // the block was closed for it, and the reply went on
    const std::string thinking = limited["content"][0]["thinking"];
    CHECK_FALSE(thinking.empty());
    CHECK(all_thinking.rfind(thinking, 0) == 0);  // greedy: the same reasoning, cut short
    CHECK(thinking.size() < all_thinking.size());
    // Exactly the first 6 tokens of the reasoning: the same prompt through /completion, 6 tokens long.
    const auto tmpl_prompt =
        c.post("/apply-template", json{{"messages", user_messages("Once upon a time")}}.dump());
    REQUIRE(tmpl_prompt.status == 200);
    const auto first6 =
        c.post("/completion",
               json{{"prompt", tmpl_prompt.json()["prompt"]}, {"n_predict", 6}, {"temperature", 0}}.dump());
    REQUIRE(first6.status == 200);
    std::string expected = first6.json()["content"];
    while (!expected.empty() && (expected.back() == ' ' || expected.back() == '\n')) expected.pop_back();
    CHECK(thinking == expected);
    body["stream"] = true;
    const json slimited = check_messages_stream(stream(c, "/v1/messages", body));
    CHECK(slimited["content"] == limited["content"]);

    // Responses: a reasoning item with reasoning_text content, counted in reasoning_tokens.
    const json r =
        c.post("/v1/responses",
               json{{"input", "Once upon a time"}, {"max_output_tokens", 12}, {"temperature", 0}}.dump())
            .json();
    INFO(r.dump());
    REQUIRE(r["output"][0]["type"] == "reasoning");
    CHECK(r["output"][0]["content"][0]["type"] == "reasoning_text");
    CHECK(all_thinking.rfind(r["output"][0]["content"][0]["text"].get<std::string>(), 0) == 0);
    CHECK(r["output"][0]["summary"] == json::array());
    CHECK(r["usage"]["output_tokens_details"]["reasoning_tokens"] == 12);
    const json sr = check_responses_stream(stream(
        c, "/v1/responses",
        json{
            {"input", "Once upon a time"}, {"max_output_tokens", 12}, {"temperature", 0}, {"stream", true}}));
    CHECK(sr["output"][0]["content"] == r["output"][0]["content"]);
}

TEST_CASE("agent APIs: thinking and reasoning.effort reach the template's enable_thinking",
          "[integration][agent][reasoning]") {
    ServerProcess s({"-m", stories_model(), "-c", "1024", "-t", "1", "--chat-template-file",
                     shared_path("templates/Qwen-Qwen3-0.6B.jinja")});
    Client c = client(s.port());
    const auto messages_count = [&](const json& thinking) {
        json body = {{"model", "m"}, {"messages", user_messages("hi")}};
        if (!thinking.is_null()) body["thinking"] = thinking;
        const auto r = c.post("/v1/messages/count_tokens", body.dump());
        REQUIRE(r.status == 200);
        return r.json()["input_tokens"].get<int>();
    };
    const auto responses_count = [&](const char* effort) {
        const auto r = c.post("/v1/responses/input_tokens",
                              json{{"input", "hi"}, {"reasoning", {{"effort", effort}}}}.dump());
        REQUIRE(r.status == 200);
        return r.json()["input_tokens"].get<int>();
    };
    // Qwen 3 writes an empty <think></think> into the prompt when thinking is off.
    const int on = messages_count({{"type", "enabled"}, {"budget_tokens", 100}});
    CHECK(messages_count({{"type", "adaptive"}}) == on);
    CHECK(messages_count(nullptr) == on);
    CHECK(messages_count({{"type", "disabled"}}) > on);
    CHECK(responses_count("high") == on);
    CHECK(responses_count("none") > on);
    // /v1/chat/completions' reasoning_effort maps the same way.
    const auto chat_count = [&](const char* effort) {
        const auto r = c.post(
            "/v1/chat/completions",
            json{{"messages", user_messages("hi")}, {"max_tokens", 1}, {"reasoning_effort", effort}}.dump());
        REQUIRE(r.status == 200);
        return r.json()["usage"]["prompt_tokens"].get<int>();
    };
    CHECK(chat_count("low") == on);
    CHECK(chat_count("none") > on);
}

TEST_CASE("agent APIs: bad input is a 400 in each API's error shape, and the server keeps serving",
          "[integration][agent]") {
    Client c = client(agent_server().port());
    const json input = "hi";
    struct Bad {
        json body;
        const char* says;
    };
    const std::vector<Bad> responses_bad = {
        {{{"input", input}, {"previous_response_id", "resp_1"}}, "previous_response_id"},
        {{{"input", input}, {"background", true}}, "background"},
        {{{"input", input}, {"include", {"reasoning.encrypted_content", "message.output_text.logprobs"}}},
         "message.output_text.logprobs"},
        {{{"input", input},
          {"tool_choice", {{"type", "function"}, {"name", "nope"}}},
          {"tools", responses_tools()}},
         "nope"},
        {{{"input",
           {{{"role", "user"}, {"content", {{{"type", "input_image"}, {"image_url", "http://x/y.png"}}}}}}}},
         "input_image"},
        {{{"input", {{{"type", "function_call_output"}, {"call_id", "call_x"}, {"output", "1"}}}}}, "call_x"},
        {{{"input", {{{"type", "item_reference"}, {"id", "msg_1"}}}}}, "item references"},
        {{{"input", input}, {"tools", responses_tools()}, {"text", {{"format", {{"type", "json_object"}}}}}},
         "text.format"},
        {{{"input", input},
          {"tools",
           {{{"type", "function"},
             {"name", "bad"},
             {"parameters", {{"type", "object"}, {"properties", {{"x", {{"type", "integr"}}}}}}}}}}},
         "parameters"},
        {{{"input", input}, {"max_output_tokens", 0}}, "/max_output_tokens"},
    };
    for (const auto& b : responses_bad) {
        const auto r = c.post("/v1/responses", b.body.dump());
        INFO(b.body.dump() << "\n" << r.body);
        CHECK(r.status == 400);
        CHECK(r.body.find(b.says) != std::string::npos);
        const json j = json::parse(r.body);
        CHECK(j["error"]["type"] == "invalid_request_error");
        CHECK(j["error"]["message"].is_string());
    }
    const json user = user_messages("hi");
    const std::vector<Bad> messages_bad = {
        {{{"model", "m"}, {"messages", user}}, "/max_tokens"},
        {{{"model", "m"}, {"messages", user}, {"max_tokens", 0}}, "/max_tokens"},
        {{{"model", "m"},
          {"max_tokens", 5},
          {"messages",
           {{{"role", "user"},
             {"content",
              {{{"type", "image"},
                {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", "AAAA"}}}}}}}}}},
         "image"},
        {{{"model", "m"},
          {"max_tokens", 5},
          {"messages",
           {{{"role", "user"},
             {"content", {{{"type", "tool_result"}, {"tool_use_id", "toolu_x"}, {"content", "1"}}}}}}}},
         "toolu_x"},
        {{{"model", "m"},
          {"max_tokens", 5},
          {"messages",
           {{{"role", "user"},
             {"content",
              {{{"type", "document"},
                {"source", {{"type", "base64"}, {"media_type", "application/pdf"}, {"data", "JVBERi0="}}}}}}}}}},
         "'base64'"},
        {{{"model", "m"},
          {"max_tokens", 5},
          {"messages", user},
          {"tools", messages_tools()},
          {"tool_choice", {{"type", "tool"}, {"name", "nope"}}}},
         "nope"},
        {{{"model", "m"},
          {"max_tokens", 5},
          {"messages", user},
          {"thinking", {{"type", "enabled"}, {"budget_tokens", 10}}}},
         "budget_tokens"},
        {{{"model", "m"}, {"max_tokens", 5}, {"messages", user}, {"container", "c"}}, "container"},
        {{{"model", "m"}, {"max_tokens", 5}, {"messages", {{{"role", "system"}, {"content", "x"}}}}},
         "/messages/0/role"},
    };
    for (const auto& b : messages_bad) {
        const auto r = c.post("/v1/messages", b.body.dump());
        INFO(b.body.dump() << "\n" << r.body);
        CHECK(r.status == 400);
        CHECK(r.body.find(b.says) != std::string::npos);
        const json j = json::parse(r.body);
        CHECK(j["type"] == "error");
        CHECK(j["error"]["type"] == "invalid_request_error");
        CHECK(j["error"]["message"].is_string());
    }
    // Routing errors under /v1/messages are Anthropic's shape too; the server keeps no responses.
    const auto nf = c.post("/v1/messages/batches", "{}");
    CHECK(nf.status == 404);
    CHECK(nf.json()["error"]["type"] == "not_found_error");
    const auto stored = c.get("/v1/responses/resp_123");
    CHECK(stored.status == 404);
    CHECK(stored.body.find("keeps no responses") != std::string::npos);
    CHECK(c.post("/v1/messages", json{{"model", "m"}, {"max_tokens", 2}, {"messages", user}}.dump()).status ==
          200);
    CHECK(c.post("/v1/responses", json{{"input", "hi"}, {"max_output_tokens", 2}}.dump()).status == 200);
}

TEST_CASE("agent APIs: --api-key accepts x-api-key and Bearer, a missing key is a 401 in the API's shape",
          "[integration][agent][auth]") {
    ServerProcess s({"-m", stories_model(), "-c", "512", "-t", "1", "--api-key", "sk-agent"});
    Client c = client(s.port());
    const std::string mbody =
        json{{"model", "m"}, {"max_tokens", 2}, {"messages", user_messages("hi")}}.dump();
    const std::string rbody = json{{"input", "hi"}, {"max_output_tokens", 2}}.dump();
    const auto none = c.post("/v1/messages", mbody);
    CHECK(none.status == 401);
    CHECK(none.json() == json{{"type", "error"},
                              {"error", {{"type", "authentication_error"}, {"message", "Invalid API Key"}}}});
    const auto wrong = c.post("/v1/messages", mbody, {{"x-api-key", "sk-other"}});
    CHECK(wrong.status == 401);
    CHECK(c.post("/v1/messages", mbody, {{"x-api-key", "sk-agent"}}).status == 200);
    CHECK(c.post("/v1/messages", mbody, {{"Authorization", "Bearer sk-agent"}}).status == 200);
    CHECK(c.post("/v1/messages/count_tokens", json{{"model", "m"}, {"messages", user_messages("hi")}}.dump(),
                 {{"x-api-key", "sk-agent"}})
              .status == 200);
    const auto rnone = c.post("/v1/responses", rbody);
    CHECK(rnone.status == 401);
    CHECK(rnone.json()["error"]["type"] == "authentication_error");
    CHECK(c.post("/v1/responses", rbody, {{"x-api-key", "sk-agent"}}).status == 200);
    CHECK(c.post("/v1/responses", rbody, {{"Authorization", "Bearer sk-agent"}}).status == 200);
}

TEST_CASE("agent APIs: a streamed request longer than the context is a 400 in the API's shape, before any event",
          "[integration][agent]") {
    // The context check runs before a stream opens (docs/reliability.md), so the client gets a status, not
    // an error event after message_start / response.created.
    ServerProcess s({"-m", stories_model(), "-c", "64", "-t", "1"});
    Client c = client(s.port());
    std::string long_text;
    for (int i = 0; i < 100; ++i) long_text += "word ";
    const Events m =
        stream(c, "/v1/messages",
               {{"model", "m"}, {"max_tokens", 5}, {"stream", true}, {"messages", user_messages(long_text)}});
    INFO(m.body);
    REQUIRE(m.status == 400);
    REQUIRE(m.list.empty());
    const json merr = json::parse(m.body);
    CHECK(merr["type"] == "error");
    CHECK(merr["error"]["type"] == "invalid_request_error");
    CHECK(merr["error"]["message"].get<std::string>().find("context size") != std::string::npos);

    const Events r =
        stream(c, "/v1/responses", {{"input", long_text}, {"max_output_tokens", 5}, {"stream", true}});
    INFO(r.body);
    REQUIRE(r.status == 400);
    REQUIRE(r.list.empty());
    CHECK(json::parse(r.body)["error"]["message"].get<std::string>().find("context size") != std::string::npos);
    // Not streamed: a 400 in each shape.
    const auto plain =
        c.post("/v1/messages",
               json{{"model", "m"}, {"max_tokens", 5}, {"messages", user_messages(long_text)}}.dump());
    CHECK(plain.status == 400);
    CHECK(plain.json()["type"] == "error");
}
