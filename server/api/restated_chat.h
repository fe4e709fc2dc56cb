// Requests of the agent APIs (OpenAI Responses, Anthropic Messages) restated as chat-completions
// bodies, so that they take the chat path unchanged: the template renders the same messages and tools,
// chat_tools.cpp builds the same tool grammar, the reply is parsed into the same tool calls and
// reasoning. responses_request.cpp and messages_request.cpp do the restating; this is what they share.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace api {

struct RestatedChat {
    // A chat-completions body: messages, tools, tool_choice, parallel_tool_calls, max_tokens, stop,
    // response_format, sampling fields, chat_template_kwargs, reasoning_format.
    nlohmann::ordered_json body = nlohmann::ordered_json::object();
    // Text the reply continues (Anthropic's final assistant turn): appended to the rendered prompt,
    // which ends with the template's generation prompt, and not repeated in the reply.
    std::string prefill;
    // Reasoning tokens the reply may spend before its reasoning block is closed (-1: no limit).
    int reasoning_budget = -1;
};

// How an API's reasoning effort reaches the template: "none" sets enable_thinking false; "minimal",
// "low", "medium", "high", "xhigh" and "max" set enable_thinking true and reasoning_effort to low,
// medium or high (the values templates such as gpt-oss's read; minimal is low, xhigh and max are high).
// Variables the request's own chat_template_kwargs sets are left alone. 400 for another value;
// `field` names the request field in the message.
void apply_reasoning_effort(nlohmann::ordered_json& chat_body, const std::string& effort,
                            std::string_view field);

// Sets enable_thinking in chat_template_kwargs unless the request's own chat_template_kwargs sets it.
void set_enable_thinking(nlohmann::ordered_json& chat_body, bool enabled);

// Copies into `chat_body` every field of `body` that is not in `consumed` and that the endpoint's schema
// (`schema`, e.g. "messages") declares: the llama.cpp sampling extensions (seed, top_k, min_p, ...), which
// mean the same in a chat body. Fields the schema does not declare are ignored, as llama-server ignores
// them (clients add fields of their own).
void copy_extension_fields(const nlohmann::ordered_json& body, const std::vector<std::string_view>& consumed,
                           std::string_view schema, nlohmann::ordered_json& chat_body);

}  // namespace api
