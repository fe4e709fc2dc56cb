// The agent APIs without a model: Responses and Messages requests restated as chat requests (messages,
// tools, tool_choice, limits, reasoning controls, refusals by name), and the replies' shapes and event
// sequences (ResponsesReply, MessagesReply) for text, reasoning and tool calls.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "server/api/messages_reply.h"
#include "server/api/messages_request.h"
#include "server/api/responses_reply.h"
#include "server/api/responses_request.h"
#include "server/http/errors.h"

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

namespace {

// The message of the 400 a restatement throws ("" when it does not throw).
template <typename F>
std::string refusal(F&& f) {
    try {
        f();
    } catch (const server::http::HttpError& e) {
        CHECK(e.status() == 400);
        return e.what();
    }
    return "";
}

std::vector<std::string> names(const std::vector<api::ReplyEvent>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.name);
    return out;
}

api::ReplyEnd end_with(std::string content, std::string reasoning = "",
                       std::vector<engine::chat::ToolCall> calls = {}) {
    api::ReplyEnd end;
    end.parsed.content = std::move(content);
    end.parsed.reasoning_content = std::move(reasoning);
    end.parsed.tool_calls = std::move(calls);
    end.input_tokens = 20;
    end.cached_tokens = 5;
    end.output_tokens = 7;
    end.reasoning_tokens = 3;
    return end;
}

}  // namespace

TEST_CASE("a Responses conversation restates as chat messages", "[server][agent]") {
    const ojson body = ojson::parse(R"({
        "instructions": "Be brief.",
        "input": [
            {"role": "developer", "content": "Use tools."},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather"},
                                                             {"type": "input_text", "text": "in Paris?"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "Look it up."}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
            {"type": "function_call", "call_id": "c2", "name": "get_time", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "Sunny"},
            {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "noon"}]}
        ],
        "tools": [{"type": "function", "name": "get_weather", "description": "d", "parameters": {"type": "object"}, "strict": true},
                  {"type": "function", "name": "get_time", "parameters": null}],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "max_output_tokens": 50, "temperature": 0.5, "seed": 3, "stream": true, "metadata": {"k": "v"},
        "reasoning": {"effort": "minimal"}, "store": false})");
    const api::RestatedResponses r = api::restate_responses_request(body);
    const ojson& chat = r.chat.body;
    const ojson expected_messages = ojson::parse(R"([
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "Use tools."},
        {"role": "user", "content": "Weather\nin Paris?"},
        {"role": "assistant", "content": "Checking.", "reasoning_content": "Look it up.",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                        {"id": "c2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": "Sunny"},
        {"role": "tool", "tool_call_id": "c2", "name": "get_time", "content": "noon"}])");
    CHECK(chat["messages"] == expected_messages);
    CHECK(chat["tools"] == ojson::parse(R"([
        {"type": "function", "function": {"name": "get_weather", "description": "d", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "get_time", "description": ""}}])"));
    CHECK(chat["tool_choice"] ==
          ojson::parse(R"({"type": "function", "function": {"name": "get_weather"}})"));
    CHECK(chat["max_tokens"] == 50);
    CHECK(chat["temperature"] == 0.5);
    CHECK(chat["seed"] == 3);
    CHECK(chat["stream"] == true);
    CHECK(chat["chat_template_kwargs"] ==
          ojson::parse(R"({"enable_thinking": true, "reasoning_effort": "low"})"));
    for (const char* gone : {"metadata", "store", "input", "instructions", "reasoning", "max_output_tokens"})
        CHECK_FALSE(chat.contains(gone));
    CHECK(r.echo["metadata"] == ojson::parse(R"({"k": "v"})"));
    CHECK(r.echo["reasoning"] == ojson::parse(R"({"effort": "minimal", "summary": null})"));
    CHECK(r.echo["store"] == false);
    CHECK(r.echo["tool_choice"] == body["tool_choice"]);
}

TEST_CASE("Responses: text.format, effort none and a string input", "[server][agent]") {
    const auto r = api::restate_responses_request(ojson::parse(R"({"input": "hi",
        "text": {"format": {"type": "json_schema", "name": "n", "schema": {"type": "object", "properties": {"b": {}, "a": {}}}}},
        "reasoning": {"effort": "none"}, "chat_template_kwargs": {"enable_thinking": true}})"));
    CHECK(r.chat.body["messages"] == ojson::parse(R"([{"role": "user", "content": "hi"}])"));
    CHECK(r.chat.body["response_format"]["json_schema"]["schema"].dump() ==
          R"({"type":"object","properties":{"b":{},"a":{}}})");  // the schema's order kept
    // The request's own template variables win over the effort's.
    CHECK(r.chat.body["chat_template_kwargs"] == ojson::parse(R"({"enable_thinking": true})"));
    CHECK(r.echo["text"]["format"]["name"] == "n");
    CHECK(api::restate_responses_request(ojson::parse(R"({"input": "x", "reasoning": {"effort": "high"}})"))
              .chat.body["chat_template_kwargs"] ==
          ojson::parse(R"({"enable_thinking": true, "reasoning_effort": "high"})"));
}

// What Codex may hold in its history: an interrupted turn's reasoning (no reply after it) and the empty or
// opaque encrypted_content of reasoning items. llama-server accepts both.
TEST_CASE("Responses: reasoning items without a reply and encrypted_content are accepted", "[server][agent]") {
    const auto messages = [](const char* body) {
        return api::restate_responses_request(ojson::parse(body)).chat.body["messages"];
    };
    const ojson r = ojson::parse(R"({"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "hmm"}]})");
    const ojson user = ojson::parse(R"({"role": "user", "content": "a"})");
    const ojson plain = messages(R"({"input": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]})");
    // dropped when a user turn or the end follows it
    CHECK(messages(ojson{{"input", {user, r, ojson{{"role", "user"}, {"content", "b"}}}}}.dump().c_str()) == plain);
    CHECK(messages(ojson{{"input", {user, r}}}.dump().c_str()) == messages(ojson{{"input", {user}}}.dump().c_str()));
    // kept with its reply; encrypted_content ("" or opaque) ignored
    ojson enc = r;
    enc["encrypted_content"] = "";
    const ojson reply = ojson::parse(R"({"role": "assistant", "content": "c"})");
    const ojson with = messages(ojson{{"input", {user, enc, reply}}}.dump().c_str());
    CHECK(with[1]["reasoning_content"] == "hmm");
    enc["encrypted_content"] = "gAAAA-opaque";
    CHECK(messages(ojson{{"input", {user, enc, reply}}}.dump().c_str()) == with);
}

TEST_CASE("Responses: what the server cannot honor is refused by name", "[server][agent]") {
    const std::vector<std::pair<const char*, const char*>> cases = {
        {R"({"input": "x", "previous_response_id": "resp_1"})", "previous_response_id"},
        {R"({"input": "x", "conversation": "conv_1"})", "conversation"},
        {R"({"input": "x", "background": true})", "background"},
        {R"({"input": "x", "include": ["message.output_text.logprobs"]})", "message.output_text.logprobs"},
        {R"({"input": "x", "truncation": "auto"})", "truncation"},
        {R"({"input": "x", "max_tool_calls": 2})", "max_tool_calls"},
        {R"({"input": "x", "top_logprobs": 2})", "top_logprobs"},
        {R"({"input": "x", "service_tier": "flex"})", "service_tier"},
        {R"({"input": "x", "stream_options": {"include_obfuscation": true}})", "include_obfuscation"},
        {R"({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "u"}]}]})",
         "input[0].content[0]"},
        {R"({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]})",
         "input_file"},
        {R"({"input": [{"type": "function_call_output", "call_id": "nope", "output": "1"}]})", "'nope'"},
        {R"({"input": [{"type": "web_search_call", "id": "w"}]})", "web_search_call"},
        {R"({"input": [{"type": "item_reference", "id": "m"}]})", "item references"},
        {R"({"input": "x", "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": []}})",
         "allowed_tools"},
        {R"({"input": "x", "tools": [{"type": "function", "name": "f"}], "text": {"format": {"type": "json_object"}}})",
         "text.format"},
        {R"({"input": "x", "reasoning": {"effort": "extreme"}})", "reasoning.effort"},
        {R"({"input": []})", "empty"},
    };
    for (const auto& c : cases) {
        const std::string body = c.first, says = c.second;
        INFO(body);
        const std::string msg = refusal([&] { api::restate_responses_request(ojson::parse(body)); });
        INFO(msg);
        CHECK(msg.find(says) != std::string::npos);
    }
    CHECK(refusal([] {
              api::restate_responses_request(ojson::parse(R"({"input": "x", "store": false,
        "service_tier": "auto", "truncation": "disabled", "include": [], "text": {"verbosity": "medium"}})"));
          }) == "");
}

// What Codex sends with every turn beside its function tools: tools of other types (left out of the prompt,
// as llama-server leaves them out), text.verbosity and store: true (nothing is stored).
TEST_CASE("Responses: tools of other types are left out and verbosity and store are accepted", "[server][agent]") {
    const auto r = api::restate_responses_request(ojson::parse(R"({"input": "x", "store": true,
        "text": {"verbosity": "low"},
        "tools": [{"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}}, {"type": "local_shell"},
                  {"type": "function", "name": "f", "parameters": {"type": "object"}}, {"type": "web_search"}]})"));
    CHECK(r.chat.body["tools"] == ojson::parse(R"([{"type": "function", "function":
        {"name": "f", "description": "", "parameters": {"type": "object"}}}])"));
    CHECK(r.echo["store"] == false);  // what was done
    const auto only_other = api::restate_responses_request(
        ojson::parse(R"({"input": "x", "tools": [{"type": "local_shell"}]})"));
    CHECK_FALSE(only_other.chat.body.contains("tools"));
}

TEST_CASE("a Messages conversation restates as chat messages", "[server][agent]") {
    const ojson body = ojson::parse(R"({
        "model": "m", "max_tokens": 100, "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Use tools."}],
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "user", "content": [{"type": "text", "text": "In Paris.", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "Look it up.", "signature": "s"},
                                              {"type": "text", "text": "Checking."},
                                              {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "Sunny"}]},
                                         {"type": "text", "text": "And tomorrow?"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "get_weather", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "down", "is_error": true}]},
            {"role": "assistant", "content": "It"}
        ],
        "tools": [{"name": "get_weather", "description": "d", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
        "stop_sequences": ["END"], "temperature": 0.2, "top_k": 5, "min_p": 0.1, "stream": true,
        "thinking": {"type": "enabled", "budget_tokens": 64},
        "output_config": {"effort": "max"},
        "metadata": {"user_id": "u"}, "service_tier": "auto", "cache_control": {"type": "ephemeral"}})");
    const api::RestatedChat r = api::restate_messages_request(body);
    const ojson expected_messages = ojson::parse(R"([
        {"role": "system", "content": "Be brief.Use tools."},
        {"role": "user", "content": "Weather?\nIn Paris."},
        {"role": "assistant", "content": "Checking.", "reasoning_content": "Look it up.",
         "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "t1", "name": "get_weather", "content": "Sunny"},
        {"role": "user", "content": "And tomorrow?"},
        {"role": "assistant", "content": "",
         "tool_calls": [{"id": "t2", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "t2", "name": "get_weather", "content": "down"}])");
    CHECK(r.body["messages"] == expected_messages);
    CHECK(r.prefill == "It");
    CHECK(r.reasoning_budget == 64);
    CHECK(
        r.body["tools"] ==
        ojson::parse(
            R"([{"type": "function", "function": {"name": "get_weather", "description": "d", "parameters": {"type": "object"}}}])"));
    CHECK(r.body["tool_choice"] == "required");
    CHECK(r.body["parallel_tool_calls"] == false);
    CHECK(r.body["stop"] == ojson::parse(R"(["END"])"));
    CHECK(r.body["max_tokens"] == 100);
    CHECK(r.body["top_k"] == 5);
    CHECK(r.body["min_p"] == 0.1);
    CHECK(r.body["chat_template_kwargs"] ==
          ojson::parse(R"({"enable_thinking": true, "reasoning_effort": "high"})"));
    for (const char* gone :
         {"metadata", "service_tier", "cache_control", "system", "thinking", "output_config", "model"})
        CHECK_FALSE(r.body.contains(gone));

    const auto named = api::restate_messages_request(ojson::parse(R"({"model": "m", "max_tokens": 5,
        "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "f"}, "thinking": {"type": "disabled"},
        "output_config": {"format": null}})"));
    CHECK(named.body["tool_choice"] == ojson::parse(R"({"type": "function", "function": {"name": "f"}})"));
    CHECK(named.body["chat_template_kwargs"] == ojson::parse(R"({"enable_thinking": false})"));
    CHECK(named.reasoning_budget == -1);
    const auto format = api::restate_messages_request(ojson::parse(R"({"model": "m", "max_tokens": 5,
        "messages": [{"role": "user", "content": "x"}], "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}}})"));
    CHECK(format.body["response_format"] ==
          ojson::parse(R"({"type": "json_schema", "json_schema": {"schema": {"type": "object"}}})"));
}

// As llama-server restates them: system blocks and a tool result's blocks run together, is_error adds no
// text, redacted thinking is dropped, tools get a description ("" when none) and Anthropic-typed tools are
// offered by name. Text documents are read as text (llama-server drops them).
TEST_CASE("Messages: llama-server's restatement of blocks and tools", "[server][agent]") {
    const auto r = api::restate_messages_request(ojson::parse(R"({"model": "m", "max_tokens": 5,
        "system": [{"type": "text", "text": "A "}, {"type": "text", "text": "B"}],
        "messages": [
            {"role": "user", "content": [{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "DOC"}},
                                         {"type": "text", "text": "Sum?"}]},
            {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"},
                                              {"type": "tool_use", "id": "t", "name": "bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": true,
                                          "content": [{"type": "text", "text": "no "}, {"type": "text", "text": "such"}]},
                                         {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "P1"}, {"type": "text", "text": "P2"}]}}]}],
        "tools": [{"type": "bash_20250124", "name": "bash"}, {"name": "f", "input_schema": {"type": "object"}}]})"));
    CHECK(r.body["messages"] == ojson::parse(R"([
        {"role": "system", "content": "A B"},
        {"role": "user", "content": "DOC\nSum?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "t", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]},
        {"role": "tool", "tool_call_id": "t", "name": "bash", "content": "no such"},
        {"role": "user", "content": "P1\nP2"}])"));
    CHECK(r.body["tools"] == ojson::parse(R"([
        {"type": "function", "function": {"name": "bash", "description": "", "parameters": {}}},
        {"type": "function", "function": {"name": "f", "description": "", "parameters": {"type": "object"}}}])"));
}

TEST_CASE("Messages: what the server cannot honor is refused by name", "[server][agent]") {
    const std::string head = R"({"model": "m", "max_tokens": 10, )";
    const std::vector<std::pair<std::string, const char*>> cases = {
        {R"("messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]})",
         "messages[0].content[0]"},
        {R"("messages": [{"role": "user", "content": [{"type": "document", "source": {}}]}]})", "document"},
        {R"("messages": [{"role": "user", "content": [{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBER"}}]}]})",
         "'base64'"},
        {R"("messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz"}]}]})",
         "'zz'"},
        {R"("messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz", "content": [{"type": "image"}]}]}]})",
         "messages[0].content[0].content[0]"},
        {R"("messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]}]})",
         "prefill"},
        {R"("messages": [{"role": "assistant", "content": "x"}]})", "user message"},
        {R"("messages": [{"role": "user", "content": "x"}], "thinking": {"type": "enabled", "budget_tokens": 10}})",
         "budget_tokens"},
        {R"("messages": [{"role": "user", "content": "x"}], "thinking": {"type": "adaptive", "display": "omitted"}})",
         "thinking.display"},
        {R"("messages": [{"role": "user", "content": "x"}], "mcp_servers": []})", "mcp_servers"},
        {R"("messages": [{"role": "user", "content": "x"}], "inference_geo": "us"})", "inference_geo"},
        {R"("messages": [{"role": "user", "content": "x"}], "speed": "fast"})", "speed"},
        {R"("messages": [{"role": "user", "content": "x"}], "tools": [{"name": "f", "input_schema": {"type": "object"}}], "output_config": {"format": {"type": "json_schema", "schema": {}}}})",
         "output_config.format"},
    };
    for (const auto& c : cases) {
        const std::string tail = c.first, says = c.second;
        INFO(tail);
        const std::string msg = refusal([&] { api::restate_messages_request(ojson::parse(head + tail)); });
        INFO(msg);
        CHECK(msg.find(says) != std::string::npos);
    }
}

TEST_CASE("ResponsesReply: streamed events and the collected body agree", "[server][agent]") {
    api::ResponsesReplyInfo info{"resp_1", 100, "model", ojson::parse(R"({"tools": [], "store": false})"),
                                 "x_"};
    api::ResponsesReply stream(info);
    std::vector<api::ReplyEvent> events = stream.start(0);
    for (const auto& [r, c] : std::vector<std::pair<std::string, std::string>>{
             {"Let me ", ""}, {"see.", ""}, {"", "Sure"}, {"", "."}}) {
        auto more = stream.delta(r, c);
        events.insert(events.end(), more.begin(), more.end());
    }
    const api::ReplyEnd end =
        end_with("Sure.", "Let me see.", {{"call_1", "get_weather", R"({"city":"Paris"})"}});
    auto last = stream.finish(end);
    events.insert(events.end(), last.begin(), last.end());
    CHECK(names(events) == std::vector<std::string>{"response.created",
                                                    "response.in_progress",
                                                    "response.output_item.added",
                                                    "response.content_part.added",
                                                    "response.reasoning_text.delta",
                                                    "response.reasoning_text.delta",
                                                    "response.reasoning_text.done",
                                                    "response.content_part.done",
                                                    "response.output_item.done",
                                                    "response.output_item.added",
                                                    "response.content_part.added",
                                                    "response.output_text.delta",
                                                    "response.output_text.delta",
                                                    "response.output_text.done",
                                                    "response.content_part.done",
                                                    "response.output_item.done",
                                                    "response.output_item.added",
                                                    "response.function_call_arguments.delta",
                                                    "response.function_call_arguments.done",
                                                    "response.output_item.done",
                                                    "response.completed"});
    for (size_t i = 0; i < events.size(); ++i) {
        CHECK(events[i].data["sequence_number"] == i);
        CHECK(events[i].data["type"] == events[i].name);
    }
    const json final_response = events.back().data["response"];
    api::ResponsesReply collected(info);
    json body = collected.body(end);
    CHECK(final_response == body);  // same item ids too: both count items from 0
    CHECK(body["status"] == "completed");
    CHECK(body["output"][0] == json::parse(R"({"id": "rs_x_0", "type": "reasoning", "summary": [],
        "content": [{"type": "reasoning_text", "text": "Let me see."}]})"));
    CHECK(body["output"][1]["content"][0]["text"] == "Sure.");
    CHECK(body["output"][2] == json::parse(R"({"id": "fc_x_2", "type": "function_call", "status": "completed",
        "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"})"));
    CHECK(body["usage"] == json::parse(R"({"input_tokens": 20, "input_tokens_details": {"cached_tokens": 5},
        "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 3}, "total_tokens": 27})"));
    CHECK(body["tools"] == json::array());
    CHECK(body["created_at"] == 100);

    // A reply cut by the token limit is incomplete; an empty one still has its (empty) message.
    api::ResponsesReply cut(info);
    api::ReplyEnd limited = end_with("");
    limited.finish = sched::FinishReason::Length;
    const auto cut_events = cut.finish(limited);
    CHECK(cut_events.back().name == "response.incomplete");
    const json incomplete = cut_events.back().data["response"];
    CHECK(incomplete["incomplete_details"]["reason"] == "max_output_tokens");
    CHECK(incomplete["output"].size() == 1);
    CHECK(incomplete["output"][0]["status"] == "incomplete");
    CHECK(incomplete["output"][0]["content"][0]["text"] == "");

    api::ResponsesReply failing(info);
    failing.start(0);
    const auto err = failing.stream_error(500, "engine failed");
    CHECK(names(err) == std::vector<std::string>{"error", "response.failed"});
    CHECK(err[1].data["response"]["status"] == "failed");
    CHECK(err[1].data["response"]["error"]["message"] == "engine failed");
    CHECK(err[1].data["sequence_number"] == 3);
}

TEST_CASE("MessagesReply: streamed events and the collected body agree, stop reasons", "[server][agent]") {
    api::MessagesReply stream({"msg_1", "model", 20});
    CHECK(stream.opens_after_prompt());  // message_start knows the cache split, as llama-server's
    std::vector<api::ReplyEvent> events = stream.start(5);
    for (const auto& [r, c] :
         std::vector<std::pair<std::string, std::string>>{{"Hm", ""}, {"", "Sure"}, {"", "."}}) {
        auto more = stream.delta(r, c);
        events.insert(events.end(), more.begin(), more.end());
    }
    const api::ReplyEnd end = end_with("Sure.", "Hm", {{"toolu_1", "get_weather", R"({"city": "Paris"})"}});
    auto last = stream.finish(end);
    events.insert(events.end(), last.begin(), last.end());
    CHECK(names(events) ==
          std::vector<std::string>{"message_start", "ping", "content_block_start", "content_block_delta",
                                   "content_block_delta", "content_block_stop", "content_block_start",
                                   "content_block_delta", "content_block_delta", "content_block_stop",
                                   "content_block_start", "content_block_delta", "content_block_stop",
                                   "message_delta", "message_stop"});
    CHECK(events[0].data["message"]["usage"] == json::parse(R"({"input_tokens": 15, "cache_read_input_tokens": 5,
        "cache_creation_input_tokens": 0, "output_tokens": 0})"));
    CHECK(events[4].data["delta"] == json::parse(R"({"type": "signature_delta", "signature": ""})"));
    CHECK(events[10].data["content_block"] ==
          json::parse(R"({"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}})"));
    CHECK(events[11].data["delta"] ==
          json::parse(R"({"type": "input_json_delta", "partial_json": "{\"city\":\"Paris\"}"})"));
    CHECK(events[13].data["delta"] == json::parse(R"({"stop_reason": "tool_use", "stop_sequence": null})"));
    CHECK(events[13].data["usage"] == json::parse(R"({"input_tokens": 15, "cache_read_input_tokens": 5,
        "cache_creation_input_tokens": 0, "output_tokens": 7})"));
    for (const auto& e : events) CHECK(e.data["type"] == e.name);

    const json body = api::MessagesReply({"msg_1", "model", 20}).body(end);
    CHECK(body["content"] == json::parse(R"([{"type": "thinking", "thinking": "Hm", "signature": ""},
        {"type": "text", "text": "Sure."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}])"));
    CHECK(body["stop_reason"] == "tool_use");

    api::ReplyEnd word = end_with("Once");
    word.stopped_word = true;
    word.stopping_word = "END";
    const json stopped = api::MessagesReply({"msg_2", "model", 1}).body(word);
    CHECK(stopped["stop_reason"] == "stop_sequence");
    CHECK(stopped["stop_sequence"] == "END");
    api::ReplyEnd limit = end_with("Once");
    limit.finish = sched::FinishReason::Length;
    CHECK(api::MessagesReply({"msg_3", "model", 1}).body(limit)["stop_reason"] == "max_tokens");
    CHECK(api::MessagesReply({"msg_4", "model", 1}).body(end_with(""))["content"] == json::array());
    CHECK(api::MessagesReply({"msg_4", "model", 1}).body(end_with("a"))["stop_reason"] == "end_turn");

    const auto err = api::MessagesReply({"msg_5", "model", 1}).stream_error(500, "engine failed");
    CHECK(err.size() == 1);
    CHECK(err[0].data ==
          json::parse(R"({"type": "error", "error": {"type": "api_error", "message": "engine failed"}})"));
    CHECK(api::anthropic_error_body(401, "k")["error"]["type"] == "authentication_error");
    CHECK(api::anthropic_error_body(503, "k")["error"]["type"] == "overloaded_error");
    CHECK(api::anthropic_error_body(422, "k")["error"]["type"] == "invalid_request_error");
}
