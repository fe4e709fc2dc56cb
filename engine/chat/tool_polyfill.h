// Polyfills for templates that cannot render tools, tool calls or tool results: the tools are
// declared in a system message, assistant tool calls become text in the assistant's content
// ({"tool_calls": [...]} JSON, the generic format's syntax) and tool results become user turns, so
// no part of the conversation is silently dropped.
#pragma once

#include "engine/chat/chat_template.h"

namespace engine::chat {

struct PolyfillNeeds {
    bool tools = false;         // declare the tools in a system message
    bool tool_calls = false;    // write assistant tool calls into the content
    bool tool_results = false;  // turn tool messages into user messages
};

// What a template with these capabilities needs polyfilled.
PolyfillNeeds polyfill_needs(const TemplateCaps& caps);

// The system text that declares `tools` (an OpenAI tools array) and how to call them.
std::string tools_system_text(const Json& tools);

// `messages` with the needed polyfills applied (tools may be null or empty).
Json apply_tool_polyfills(const Json& messages, const Json& tools, const PolyfillNeeds& needs);

}  // namespace engine::chat
