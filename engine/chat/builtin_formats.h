// Built-in chat formats for the common model families, written in C++ (no Jinja), selected by the
// names llama.cpp's `--chat-template NAME` accepts: chatml, llama2, llama3, mistral-v7, gemma, ...
// Also the detection that maps a model's Jinja template text to the built-in format it implements.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/chat_template.h"

namespace engine::chat {

// Names of all built-in formats, sorted.
std::vector<std::string> list_builtin_formats();
bool is_builtin_format(std::string_view name);

// Formats the conversation (role + text content of each message; content-part arrays contribute
// their text parts). Throws std::invalid_argument for an unknown format name.
std::string format_builtin(const std::string& name, const std::vector<ChatMessage>& messages,
                           bool add_generation_prompt);
std::string format_builtin(const std::string& name, const Json& messages, bool add_generation_prompt);

// The built-in format whose markers the template text contains (a format name is accepted as is);
// "chatml" for an empty template, "jinja-only" when no built-in format matches.
std::string detect_builtin_format(std::string_view template_text);

inline constexpr const char* kJinjaOnly = "jinja-only";

}  // namespace engine::chat
