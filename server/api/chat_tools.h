// Tool-calling semantics of a chat request: `tools` (checked, client key order kept),
// `tool_choice` (auto / none / required / a named function), `parallel_tool_calls`, tool messages
// that must answer an earlier call, and the grammar that makes the model call well-formed tools:
// always for required / named, lazily from the format's trigger words for auto.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "engine/chat/chat_parser.h"
#include "server/api/request_params.h"

namespace api {

enum class ToolChoice { Auto, None, Required, Named };

struct ChatTools {
    nlohmann::ordered_json tools;  // null when the request has none (or tool_choice is none)
    ToolChoice choice = ToolChoice::Auto;
    std::string named;  // the function of a named tool_choice
    bool parallel = true;
    bool active() const { return tools.is_array() && !tools.empty(); }
};

// Reads tools / tool_choice / parallel_tool_calls from the request body (parsed in the client's key
// order) and checks the messages' tool results against earlier calls. Errors are 400s.
ChatTools parse_chat_tools(const nlohmann::ordered_json& body);

// Sets the grammar of `opts` for the tools (nothing for auto without tools or for none). A request
// grammar (grammar / json_schema / response_format) together with tools is a 400. The format's
// markers that are control tokens of `vocab` are named as tokens, and trigger as tokens.
void apply_tool_grammar(const ChatTools& tools, engine::chat::ToolCallFormat format, const engine::Vocab& vocab,
                        GenerationOptions& opts);

// A prompt that ends inside an open reasoning block (DeepSeek R1's and MiniMax M2's generation prompts
// open <think>): a forced call (tool_choice required or named, so the grammar is not lazy) starts by
// closing the block with `close` (as a token where the vocabulary has it as one control token), so the
// call is the reply's content and not its reasoning. Nothing for a lazy or absent grammar.
void close_reasoning_first(const std::string& close, const engine::Vocab& vocab, GenerationOptions& opts);

// For each tool, its parameters whose schema is a string's (ParseOptions::string_parameters).
std::map<std::string, std::set<std::string>> string_parameters(const ChatTools& tools);

}  // namespace api
