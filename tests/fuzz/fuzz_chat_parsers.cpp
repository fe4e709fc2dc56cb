// libFuzzer target: generated text (a model can write anything) -> the reasoning and tool-call parsers
// of each format, whole (engine/chat parse_output, split_reasoning, parse_tool_calls, the response's
// message JSON) and streamed in arbitrary pieces (server/api ChatStreamParser), checking that streaming
// never sends content or reasoning that the whole reply's parse does not start with.
// Input: byte 0 picks the format and options, byte 1 seeds the piece sizes, the rest is the text.
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

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    using engine::chat::ToolCallFormat;
    const uint8_t mode = data[0];
    uint32_t state = 0x2545F491u ^ (uint32_t(data[1]) << 8);
    const std::string text(reinterpret_cast<const char*>(data) + 2, size - 2);

    engine::chat::ParseOptions options;
    options.tool_format = static_cast<ToolCallFormat>(mode % 7);
    options.extract_reasoning = mode & 8;
    options.reasoning_opened_in_prompt = mode & 16;
    options.id_prefix = "call_";

    const auto whole = engine::chat::parse_output(text, options);
    (void)api::parsed_message_json(whole);
    (void)whole.tool_calls_json();
    (void)engine::chat::split_reasoning(text, options.reasoning_opened_in_prompt);
    (void)engine::chat::prompt_opens_reasoning(text);
    (void)engine::chat::parse_tool_calls(text, options.tool_format);

    // Streamed: triggers only where the request has tools (mode bit 5), as the server does it.
    std::vector<std::string> triggers;
    if ((mode & 32) && options.tool_format != ToolCallFormat::None)
        triggers = api::tool_syntax(options.tool_format).triggers;
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
    if (!starts_with(fin.parsed.content, content) || !starts_with(fin.parsed.reasoning_content, reasoning)) {
        std::fprintf(stderr, "streamed text is not a prefix of the parsed reply\n");
        std::abort();
    }
    return 0;
}
