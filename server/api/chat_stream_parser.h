// Streaming a chat reply that may hold reasoning (<think>...</think>) and tool calls: text is fed as
// it is generated, and only what is certain goes out as content or reasoning deltas. Text that could
// still become a tool-call trigger or a closing </think> is held back; once a trigger appears, the
// rest waits for the end, where the whole reply is parsed (engine/chat parse_output) into tool calls.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/chat/chat_parser.h"

namespace api {

class ChatStreamParser {
public:
    // triggers: the text that starts a tool call in this format (empty: no tool calls expected).
    ChatStreamParser(engine::chat::ParseOptions options, std::vector<std::string> triggers);

    struct Delta {
        std::string reasoning;
        std::string content;
        bool empty() const { return reasoning.empty() && content.empty(); }
    };
    // New generated text in; the reasoning and content that can be sent now.
    Delta feed(const std::string& text);

    struct Final {
        Delta delta;  // what was held back and belongs to content or reasoning
        engine::chat::ParsedOutput parsed;
    };
    // The end of generation: the whole reply parsed, and what is left to send.
    Final finish();

private:
    // What is certain in text_ so far: {reasoning, content}.
    Delta certain() const;

    engine::chat::ParseOptions options_;
    std::vector<std::string> triggers_;
    std::string text_;
    std::string sent_reasoning_;
    std::string sent_content_;
};

// The assistant message of a parsed reply as the response's JSON (content, reasoning_content, tool_calls).
nlohmann::json parsed_message_json(const engine::chat::ParsedOutput& parsed);

}  // namespace api
