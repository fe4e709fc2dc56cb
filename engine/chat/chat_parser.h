// Parsing a model's generated text back into an OpenAI assistant message: reasoning
// (<think>...</think>), tool calls in the model family's own syntax, and the remaining content.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/chat/chat_template.h"

namespace engine::chat {

struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;  // JSON text, as OpenAI's function.arguments
};

struct ParsedOutput {
    std::string content;
    std::string reasoning_content;
    std::vector<ToolCall> tool_calls;

    // [{"id", "type": "function", "function": {"name", "arguments"}}, ...]
    Json tool_calls_json() const;
    // {"role": "assistant", "content", ["reasoning_content"], ["tool_calls"]}; content is null
    // when there are tool calls and no text, as OpenAI returns it.
    Json to_message_json() const;
};

enum class ToolCallFormat {
    None,         // no tool calls: everything is content
    Generic,      // {"tool_calls": [{"name", "arguments"}]} / {"tool_call": {...}} / {"response": "..."}
    Hermes,       // <tool_call>{"name", "arguments"}</tool_call> (Hermes, Qwen 2.5/3; Qwen3-Coder XML inside)
    Llama3Json,   // {"name", "parameters"} as the whole reply, optionally after <|python_tag|>
    Mistral,      // [TOOL_CALLS][{"name", "arguments", "id"}] or [TOOL_CALLS]name[ARGS]{...}
    FunctionTag,  // <function=name>{...}</function> (Functionary v3.1, Llama 3.1 custom tools)
    DeepSeek,  // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>...<｜tool▁calls▁end｜> (R1 and V3.1 layouts)
};

std::string_view tool_call_format_name(ToolCallFormat format);
// The tool-call syntax a chat template teaches its model, from the markers in its source.
ToolCallFormat detect_tool_call_format(std::string_view template_source);

struct ParseOptions {
    ToolCallFormat tool_format = ToolCallFormat::None;
    bool extract_reasoning = true;
    bool reasoning_opened_in_prompt = false;  // the prompt ended inside <think> (see prompt_opens_reasoning)
    std::string id_prefix = "call_";          // calls without an id get id_prefix + their index
};

ParsedOutput parse_output(std::string_view text, const ParseOptions& options);

// {reasoning, rest}: the text of a leading <think>...</think> block (trimmed) and what follows
// it. With `opened_in_prompt` the text starts inside the block. An unclosed block is all reasoning.
std::pair<std::string, std::string> split_reasoning(std::string_view text, bool opened_in_prompt);

// Whether a rendered prompt ends inside an open <think> block, so the reply starts in reasoning.
bool prompt_opens_reasoning(std::string_view prompt);

// Tool calls and leftover content for one format (reasoning already removed).
ParsedOutput parse_tool_calls(std::string_view text, ToolCallFormat format,
                              const std::string& id_prefix = "call_");

}  // namespace engine::chat
