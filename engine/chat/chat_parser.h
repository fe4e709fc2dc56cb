// Parsing a model's generated text back into an OpenAI assistant message: reasoning
// (<think>...</think>), tool calls in the model family's own syntax, and the remaining content.
// The tool-call parsers also read text that is still being generated (scan_tool_calls), so a stream
// can send each call's name once it is complete and its arguments as they grow.
#pragma once

#include <map>
#include <set>
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
    None,          // no tool calls: everything is content
    Generic,       // {"tool_calls": [{"name", "arguments"}]} / {"tool_call": {...}} / {"response": "..."}
    Hermes,        // <tool_call>{"name", "arguments"}</tool_call> (Hermes, Qwen 2.5/3, Granite 4)
    Llama3Json,    // {"name", "parameters"} as the whole reply, optionally after <|python_tag|>
    Mistral,       // [TOOL_CALLS][{"name", "arguments", "id"}, ...] (Mistral Nemo)
    MistralArgs,   // [TOOL_CALLS]name[CALL_ID]id[ARGS]{...} (Mistral Small 3.2, Devstral, Ministral 3)
    FunctionTag,   // <function=name>{...}</function> (Functionary v3.1, Llama 3.1 custom tools)
    DeepSeek,      // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>name\n```json\n{...}\n```...
    DeepSeekV31,   // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>name<｜tool▁sep｜>{...}<｜tool▁call▁end｜>...
    Granite,       // <|tool_call|>[{"name", "arguments"}, ...] (Granite 3.x)
    CommandR7B,    // <|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]<|END_ACTION|>
    CommandRPlus,  // Action:\n```json\n[{"tool_name", "parameters"}]\n```
    Kimi,          // <|tool_calls_section_begin|><|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{...}...
    Qwen3Coder,    // <tool_call>\n<function=name>\n<parameter=key>\nvalue\n</parameter>\n</function>\n</tool_call>
    SeedOss,       // <seed:tool_call>\n<function=name>\n<parameter=key>value</parameter>\n</function>\n</seed:tool_call>
    Glm45,         // <tool_call>name\n<arg_key>key</arg_key>\n<arg_value>value</arg_value>\n</tool_call> (GLM 4.5/4.6)
    Glm47,         // the same without the new lines (GLM 4.7)
    MiniMaxM2,     // <minimax:tool_call>\n<invoke name="name">\n<parameter name="key">value</parameter>\n</invoke>\n...
    FireFunction,  //  functools[{"name", "arguments"}, ...] (Firefunction v2)
    Harmony,       // <|channel|>commentary to=functions.name <|constrain|>json<|message|>{...} (gpt-oss)
};

std::string_view tool_call_format_name(ToolCallFormat format);
// The tool-call syntax a chat template teaches its model, from the markers in its source.
ToolCallFormat detect_tool_call_format(std::string_view template_source);

// The tags around a reply's reasoning: <think>...</think> for most families, Command R7B's own.
struct ReasoningTags {
    std::string open = "<think>";
    std::string close = "</think>";
};
// The reasoning tags a chat template uses.
ReasoningTags detect_reasoning_tags(std::string_view template_source);

struct ParseOptions {
    ToolCallFormat tool_format = ToolCallFormat::None;
    bool extract_reasoning = true;
    bool reasoning_opened_in_prompt = false;  // the prompt ended inside <think> (see prompt_opens_reasoning)
    ReasoningTags reasoning_tags;
    // Calls without an id get id_prefix + their index, zero-padded to id_digits digits (Mistral's
    // templates want ids of exactly nine characters).
    std::string id_prefix = "call_";
    int id_digits = 0;
    // Formats that write each parameter as text (the XML ones): for each tool, the parameters whose
    // schema is a string, whose text is the value as it stands. Other values are read as JSON (and
    // as a string when they are not JSON).
    std::map<std::string, std::set<std::string>> string_parameters;
    // A response format constrained the reply: its content is the JSON value alone (json_reply.h).
    bool json_reply = false;
    // gpt-oss's Harmony messages (harmony.h): reasoning, content and calls come from the channels, with or
    // without tools.
    bool harmony = false;
};

ParsedOutput parse_output(std::string_view text, const ParseOptions& options);

// {reasoning, rest}: the text of a leading reasoning block (trimmed) and what follows it. With
// `opened_in_prompt` the text starts inside the block. An unclosed block is all reasoning.
std::pair<std::string, std::string> split_reasoning(std::string_view text, bool opened_in_prompt,
                                                    const ReasoningTags& tags = {});

// Whether a rendered prompt ends inside an open reasoning block, so the reply starts in reasoning.
bool prompt_opens_reasoning(std::string_view prompt, const ReasoningTags& tags = {});

// Tool calls and leftover content for one format (reasoning already removed).
ParsedOutput parse_tool_calls(std::string_view text, const ParseOptions& options);

// A tool call as far as a text that is still growing shows it. `arguments` only grows: each scan of
// a longer text gives a string that starts with the previous one, and once the call is complete it
// equals the whole parse's arguments. The name is set only once it is complete.
struct PartialToolCall {
    std::string id;
    std::string name;
    bool named = false;
    std::string arguments;
    bool complete = false;
};

// The calls in `text`, the beginning of a reply (reasoning already removed) that may continue. Calls
// that turn out malformed end the list; calls are not repeated between scans of longer texts.
std::vector<PartialToolCall> scan_tool_calls(std::string_view text, const ParseOptions& options);

}  // namespace engine::chat
