// Chat-request options that shape the prompt and the parsing of the reply: chat_template_kwargs
// (over the server's --chat-template-kwargs), reasoning_format (over --reasoning-format), the reasoning
// budget fields (over --reasoning-budget and --reasoning-budget-message), a final assistant message to
// continue (--prefill-assistant); and the server-wide template variables of -rea, --reasoning-effort and
// --reasoning-preserve.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace api {

// Extra template variables: the server's defaults, then the request's chat_template_kwargs; a
// reasoning budget of 0 sets enable_thinking to false unless the request sets it, and where nothing
// sets it, it is true (llama-server's default). 400 when chat_template_kwargs is not an object.
nlohmann::ordered_json chat_template_kwargs(const nlohmann::ordered_json& body,
                                            const nlohmann::ordered_json& defaults, int reasoning_budget);

// Whether <think> blocks go to reasoning_content: reasoning_format "none" keeps them in content,
// "deepseek" and "auto" extract them. `fallback` is the server's --reasoning-format. 400 for others.
bool extract_reasoning(const nlohmann::ordered_json& body, const std::string& fallback);

// Checks a --reasoning-format value (throws std::invalid_argument).
void check_reasoning_format(const std::string& value);

// The reasoning budget of a chat request: reasoning_budget_tokens, else thinking_budget_tokens (the
// names llama-server reads; -1 or absent: `fallback`, the server's --reasoning-budget). 400 below -1.
int request_reasoning_budget(const nlohmann::ordered_json& body, int fallback);

// The text written before the closing tag when the budget runs out: reasoning_budget_message, else
// `fallback` (--reasoning-budget-message).
std::string request_budget_message(const nlohmann::ordered_json& body, const std::string& fallback);

// --prefill-assistant: when the last message is the assistant's with text and no tool calls, removes it
// from `messages` and returns its text, which the reply continues (the prompt ends with the template's
// generation prompt and then this text). Otherwise "" and `messages` unchanged. `turn`, when given,
// receives the message removed (its reasoning is rendered with the continued turn).
std::string take_assistant_prefill(nlohmann::ordered_json& messages, nlohmann::ordered_json* turn = nullptr);

// 400 for a content part the model cannot read (image_url, input_audio, input_video, file), naming it: a
// text-only model must not answer as if it had seen an image. Text parts (and refusals) pass.
void require_text_content(const nlohmann::ordered_json& messages);

// The template level of a reasoning effort: minimal and low are "low", medium "medium", high, xhigh and
// max "high" (the values templates such as gpt-oss's read), none "" (no reasoning). False for another
// value.
bool reasoning_effort_level(const std::string& effort, std::string& level);

// Server-wide template variables (the server's chat_template_kwargs; variables --chat-template-kwargs
// sets are left alone). Each throws std::invalid_argument for a bad value.
// -rea on|off|auto (also llama-server's enabled/true/1, disabled/false/0, -1): enable_thinking.
void apply_reasoning_switch(const std::string& value, nlohmann::ordered_json& kwargs);
// --reasoning-effort default|none|minimal|low|medium|high|xhigh|max: reasoning_effort (none:
// enable_thinking false); default leaves the template's own default.
void apply_reasoning_effort_default(const std::string& value, nlohmann::ordered_json& kwargs);
// --reasoning-preserve / --no-reasoning-preserve: the variables templates read to keep the reasoning of
// earlier turns (preserve_thinking) or to drop it (clear_thinking, truncate_history_thinking).
void apply_reasoning_preserve(bool preserve, nlohmann::ordered_json& kwargs);

}  // namespace api
