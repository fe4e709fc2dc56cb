// gpt-oss's Harmony replies: a sequence of messages, each a header (the channel after <|channel|>, a
// recipient after " to=", a content type after <|constrain|> or after the channel) then <|message|> and its
// text, ended by <|end|> (the reply goes on with <|start|>assistant and the next header), or by <|call|> /
// <|return|> (end of generation, which the reply's text does not show). The generation prompt ends with
// <|start|>assistant, so the reply starts with the first header.
//
// Read as llama-server 0.7.0 reads gpt-oss (compared side by side): the analysis channel is the reasoning,
// the final channel (and text outside any message) the content, a message to functions.NAME a call of NAME
// with the message as its JSON arguments, commentary without a recipient (a preamble) content too. The
// messages of a channel are joined as written (no separator, nothing trimmed); the final message is the
// last one read; reasoning that is only whitespace is none; messages to built-in tools (`python`,
// `browser.search`) and, in a request without tools, to functions are left out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/chat_parser.h"

namespace engine::chat {

struct HarmonyMessage {
    std::string channel;
    std::string recipient;  // "functions.get_weather", or "" (to the user)
    std::string text;       // the message's text so far
    bool has_body = false;  // its header is complete (<|message|> seen)
    bool complete = false;  // its end marker was seen
    size_t start = 0;       // where its header starts in the reply
    size_t text_end = 0;    // where its text ends in the reply (before its end marker)
};

// The messages of a reply (or of its beginning, while it streams). Text before the first header is a
// message without channel. A growing reply's last message may be incomplete; text that may be the start of
// a marker ("<|en") is left out of it.
std::vector<HarmonyMessage> split_harmony(std::string_view text);

// The whole reply: reasoning (analysis messages), content and tool calls. Without extract_reasoning the
// content is harmony_raw_content's.
ParsedOutput parse_harmony(std::string_view text, const ParseOptions& options);

// reasoning_format none, as llama-server writes it: each analysis message as the model wrote it
// (<|channel|>analysis<|message|>...<|end|>), the other messages' text without their headers, up to the
// first call.
std::string harmony_raw_content(const std::vector<HarmonyMessage>& messages);

// The calls in a growing reply, as scan_tool_calls gives them for the other formats: named once the header
// is complete, arguments growing (without a trailing partial marker).
std::vector<PartialToolCall> scan_harmony_calls(std::string_view text, const ParseOptions& options);

// A message's recipient is a function: the function's name ("" otherwise).
std::string harmony_function(const HarmonyMessage& m);

// A message addressed to a tool (a function or a built-in one), not to the user.
bool harmony_to_tool(const HarmonyMessage& m);

// What a reply (or its beginning) says, message by message, by the rules above.
struct HarmonyReading {
    std::string reasoning;
    std::string content;
    std::vector<size_t> calls;  // the messages that are calls (with_calls only)
    bool call_seen = false;     // a message to a function, called or not, its header complete or not
};
HarmonyReading read_harmony(const std::vector<HarmonyMessage>& messages, bool with_calls);

}  // namespace engine::chat
