// Streaming a chat reply that may hold reasoning (<think>...</think>) and tool calls: text is fed as
// it is generated, and only what is certain goes out as content or reasoning deltas. Text that could
// still become a tool-call trigger or a closing </think> is held back. Once a trigger appears, the
// calls are read as they grow (engine/chat scan_tool_calls): each call goes out once its name is
// complete, then its arguments piece by piece; the content after the trigger waits for the end, where
// the whole reply is parsed (engine/chat parse_output).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/chat/chat_parser.h"
#include "engine/chat/json_reply.h"

namespace api {

class ChatStreamParser {
public:
    // triggers: the text that starts a tool call in this format (empty: no tool calls expected).
    ChatStreamParser(engine::chat::ParseOptions options, std::vector<std::string> triggers);

    // A piece of one tool call: the first of a call carries its id and name (and the arguments so far).
    struct CallDelta {
        size_t index = 0;
        bool first = false;
        std::string id;
        std::string name;
        std::string arguments;  // extends what was sent of the call's arguments
    };
    struct Delta {
        std::string reasoning;
        std::string content;
        std::vector<CallDelta> calls;
        bool empty() const { return reasoning.empty() && content.empty() && calls.empty(); }
    };
    // New generated text in; the reasoning and content that can be sent now.
    Delta feed(const std::string& text);

    struct Final {
        Delta delta;  // what was held back: content, reasoning, calls and arguments not sent yet
        // The whole reply parsed; the calls that went out keep the ids they went out with.
        engine::chat::ParsedOutput parsed;
    };
    // The end of generation: the whole reply parsed, and what is left to send. truncated: the token limit
    // ended the reply (see drop_unfinished_call).
    Final finish(bool truncated = false);

private:
    struct Certain {
        std::string reasoning;
        std::string content;
        size_t body = std::string::npos;  // where the text after the reasoning starts (npos: still in it)
        bool triggered = false;           // a trigger appeared in that text
    };
    // What is certain in text_ so far.
    Certain certain() const;
    Certain harmony_certain() const;
    Certain harmony_json_reply(Certain d) const;
    // A call's arguments: `now` extends what went out; the new part, recorded as sent.
    CallDelta call_delta(size_t index, const std::string& id, const std::string& name, const std::string& arguments);

    engine::chat::ParseOptions options_;
    std::vector<std::string> triggers_;
    std::string text_;
    std::string sent_reasoning_;
    std::string sent_content_;
    struct SentCall {
        std::string id;
        std::string arguments;
    };
    std::vector<SentCall> sent_calls_;
    // A response format's reply: its JSON value, read as the body grows (the body's start in text_).
    mutable engine::chat::JsonReplyReader json_reader_;
    mutable size_t json_body_ = std::string::npos;
};

// A reply the token limit cut inside a tool call: the unfinished call's markup (from the first trigger
// left in the content) is not content. A complete but malformed call stays content, as llama-server sends it.
void drop_unfinished_call(engine::chat::ParsedOutput& parsed, const std::vector<std::string>& triggers);

// The whole reply parsed, with drop_unfinished_call applied where the token limit ended it.
engine::chat::ParsedOutput parse_reply(const std::string& text, const engine::chat::ParseOptions& options,
                                       const std::vector<std::string>& triggers, bool truncated);

// The assistant message of a parsed reply as the response's JSON (content, reasoning_content, tool_calls).
nlohmann::json parsed_message_json(const engine::chat::ParsedOutput& parsed);

}  // namespace api
