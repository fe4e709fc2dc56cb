// POST /v1/messages (Anthropic Messages API) restated as a chat request (restated_chat.h).
//
// system: a string or text blocks (joined with "\n") -> the system message. messages: user and
// assistant turns whose content is a string or blocks: text; tool_use (assistant) -> tool_calls, its
// input as the JSON arguments; tool_result (user) -> a tool message answering an earlier tool_use, its
// content a string or text blocks, "Error: " before it when is_error is true; thinking (assistant) ->
// reasoning_content. Consecutive turns of one role are combined into one, as Anthropic does. A final
// assistant turn of text is a prefill: the reply continues it. Images, documents, redacted thinking and
// server-tool blocks are 400s naming the block. tools: {name, description, input_schema}; server tools
// are 400s. tool_choice: auto / any (required) / tool (named) / none, disable_parallel_tool_use.
// stop_sequences -> stop; thinking enabled (budget_tokens: a real limit on reasoning tokens) /
// adaptive -> enable_thinking true, disabled -> false; output_config.effort -> template variables,
// output_config.format (json_schema) -> response_format. llama.cpp's sampling fields pass through.
#pragma once

#include <nlohmann/json.hpp>

#include "server/api/restated_chat.h"

namespace api {

// `body` is validated against schemas/messages.json (or messages_count_tokens.json) already.
RestatedChat restate_messages_request(const nlohmann::ordered_json& body);

}  // namespace api
