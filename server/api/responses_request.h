// POST /v1/responses (OpenAI Responses API) restated as a chat request (restated_chat.h).
//
// input: a string (one user message) or items: messages (roles user, assistant, system, developer;
// content a string or input_text / output_text / refusal parts, joined with "\n"), function_call items
// (the assistant's tool calls, joined to the assistant message before them), function_call_output items
// (tool messages; each must answer an earlier function_call), reasoning items (the next assistant
// message's reasoning_content). `instructions` and the leading system/developer messages become one
// system message. Images, files, audio, item references and hosted-tool items are 400s naming the
// item. tools: function tools ({type, name, description, parameters, strict}); tool_choice: auto, none,
// required or {type: function, name}. max_output_tokens -> max_tokens; text.format json_object /
// json_schema -> response_format; reasoning.effort -> template variables (apply_reasoning_effort).
// The server keeps no responses: previous_response_id, conversation, store: true and background are
// 400s, as are the fields it cannot honor (include, reasoning.summary, top_logprobs, max_tool_calls,
// truncation auto, ...); llama.cpp's sampling fields (seed, top_k, min_p, ...) pass through.
#pragma once

#include <nlohmann/json.hpp>

#include "server/api/restated_chat.h"

namespace api {

struct RestatedResponses {
    RestatedChat chat;
    // The request's settings as the response object repeats them: instructions, max_output_tokens,
    // metadata, parallel_tool_calls, reasoning, text, tool_choice, tools, user, ... (model, temperature
    // and top_p are added by the handler, which knows the effective values).
    nlohmann::ordered_json echo = nlohmann::ordered_json::object();
};

// `body` is validated against schemas/responses.json (or responses_input_tokens.json) already.
RestatedResponses restate_responses_request(const nlohmann::ordered_json& body);

}  // namespace api
