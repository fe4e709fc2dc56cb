// gpt-oss's Harmony replies: a sequence of messages, each a header (the channel after <|channel|>, a
// recipient after " to=", a content type after <|constrain|> or after the channel) then <|message|> and its
// text, ended by <|end|> (the reply goes on with <|start|>assistant and the next header), or by <|call|> /
// <|return|> (end of generation, which the reply's text does not show). The generation prompt ends with
// <|start|>assistant, so the reply starts with the first header.
//
// Read as llama-server reads gpt-oss: the analysis channel is the reasoning, the final channel (and text
// outside any message) the content, a message to functions.NAME a call of NAME with the message as its JSON
// arguments, commentary without a recipient (a preamble) content too.
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

}  // namespace engine::chat
