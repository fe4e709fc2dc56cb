// Chat-request options that shape the prompt and the parsing of the reply: chat_template_kwargs
// (over the server's --chat-template-kwargs) and reasoning_format (over --reasoning-format).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace api {

// Extra template variables: the server's defaults, then the request's chat_template_kwargs; a
// reasoning budget of 0 sets enable_thinking to false unless the request sets it. 400 when
// chat_template_kwargs is not an object.
nlohmann::ordered_json chat_template_kwargs(const nlohmann::ordered_json& body,
                                            const nlohmann::ordered_json& defaults, int reasoning_budget);

// Whether <think> blocks go to reasoning_content: reasoning_format "none" keeps them in content,
// "deepseek" and "auto" extract them. `fallback` is the server's --reasoning-format. 400 for others.
bool extract_reasoning(const nlohmann::ordered_json& body, const std::string& fallback);

// Checks a --reasoning-format value (throws std::invalid_argument).
void check_reasoning_format(const std::string& value);

}  // namespace api
