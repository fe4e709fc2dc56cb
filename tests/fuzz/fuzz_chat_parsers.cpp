// libFuzzer target: generated text (a model can write anything) -> the reasoning and tool-call parsers
// of each format, whole (engine/chat parse_output, split_reasoning, parse_tool_calls, the response's
// message JSON) and streamed in arbitrary pieces (server/api ChatStreamParser), checking that streaming
// never sends content or reasoning that the whole reply's parse does not start with (whitespace at either
// end aside), also for a response format's reply (the JSON value alone).
// Input: byte 0 picks the format and options, byte 1 seeds the piece sizes, the rest is the text.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "engine/chat/chat_parser.h"
#include "server/api/chat_stream_parser.h"
#include "server/api/tool_syntax.h"

namespace {

bool space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim_left(std::string_view s) {
    while (!s.empty() && space(s.front())) s.remove_prefix(1);
    return s;
}

std::string_view trim(std::string_view s) {
    s = trim_left(s);
    while (!s.empty() && space(s.back())) s.remove_suffix(1);
    return s;
}

// What was streamed is the start of what the whole reply holds, apart from whitespace at either end (the
// whole-reply parsers of some formats trim their content, and a stream cannot know yet whether a leading
// space will be kept).
bool streamed_prefix(std::string_view streamed, std::string_view whole) {
    streamed = trim(streamed);
    whole = trim_left(whole);
    return whole.substr(0, streamed.size()) == streamed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    using engine::chat::ToolCallFormat;
    const uint8_t mode = data[0];
    uint32_t state = 0x2545F491u ^ (uint32_t(data[1]) << 8);
    const std::string text(reinterpret_cast<const char*>(data) + 2, size - 2);

    // As the server does it: a tool-call format (and its stream triggers) only where the request has tools.
    const bool tools = mode & 32;
    engine::chat::ParseOptions options;
    constexpr int kFormats = int(ToolCallFormat::Harmony) + 1;
    options.tool_format = tools ? static_cast<ToolCallFormat>(mode % kFormats) : ToolCallFormat::None;
    options.extract_reasoning = mode & 8;
    options.reasoning_opened_in_prompt = mode & 16;
    options.id_prefix = "call_";
    // A response format's reply (no tools then): its content is the JSON value alone.
    options.json_reply = !tools && (mode & 64);
    // gpt-oss's channels, with its calls or without tools.
    options.harmony = options.tool_format == ToolCallFormat::Harmony || (!tools && (mode & 128));

    const auto whole = engine::chat::parse_output(text, options);
    (void)api::parsed_message_json(whole);
    (void)whole.tool_calls_json();
    (void)engine::chat::split_reasoning(text, options.reasoning_opened_in_prompt);
    (void)engine::chat::prompt_opens_reasoning(text);
    engine::chat::ParseOptions any_format = options;
    any_format.tool_format = static_cast<ToolCallFormat>(mode % kFormats);
    (void)engine::chat::parse_tool_calls(text, any_format);
    (void)engine::chat::scan_tool_calls(text, any_format);

    std::vector<std::string> triggers;
    if (options.tool_format != ToolCallFormat::None)
        triggers = api::reply_triggers(api::tool_syntax(options.tool_format));  // as the server passes them
    api::ChatStreamParser stream(options, triggers);
    std::string content, reasoning;
    for (size_t pos = 0; pos < text.size();) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        const size_t n = std::min<size_t>(text.size() - pos, 1 + state % 16);
        const auto d = stream.feed(text.substr(pos, n));
        content += d.content;
        reasoning += d.reasoning;
        pos += n;
    }
    const auto fin = stream.finish();
    content += fin.delta.content;
    reasoning += fin.delta.reasoning;
    if (!streamed_prefix(content, fin.parsed.content) ||
        !streamed_prefix(reasoning, fin.parsed.reasoning_content)) {
        std::fprintf(stderr, "streamed text is not a prefix of the parsed reply\n");
        std::abort();
    }
    return 0;
}
