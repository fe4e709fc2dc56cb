// Reasoning extraction and the assembly of a parsed reply (reasoning first, then tool calls).
#include <cctype>
#include <tuple>

#include "engine/chat/chat_parser.h"
#include "engine/chat/harmony.h"
#include "engine/chat/json_reply.h"
#include "engine/chat/text_scan.h"

namespace engine::chat {

std::pair<std::string, std::string> split_reasoning(std::string_view text, bool opened_in_prompt,
                                                    const ReasoningTags& tags) {
    const std::string_view open = tags.open, close = tags.close;
    size_t pos = 0;
    if (!opened_in_prompt) {
        const std::string_view lead = ltrim_view(text);
        if (lead.substr(0, open.size()) != open) return {"", std::string(text)};
        pos = text.size() - lead.size() + open.size();
    }
    const size_t end = text.find(close, pos);
    if (end == std::string_view::npos) return {std::string(trim_view(text.substr(pos))), ""};
    return {std::string(trim_view(text.substr(pos, end - pos))),
            std::string(ltrim_view(text.substr(end + close.size())))};
}

bool prompt_opens_reasoning(std::string_view prompt, const ReasoningTags& tags) {
    prompt = trim_view(prompt);
    const size_t open = prompt.rfind(tags.open);
    if (open == std::string_view::npos) return false;
    return prompt.find(tags.close, open) == std::string_view::npos;
}

ParsedOutput parse_output(std::string_view text, const ParseOptions& options) {
    if (options.harmony) {
        ParsedOutput out = parse_harmony(text, options);
        if (options.json_reply) out.content = json_reply_content(out.content, false);
        return out;
    }
    std::string reasoning;
    std::string rest(text);
    if (options.extract_reasoning)
        std::tie(reasoning, rest) =
            split_reasoning(text, options.reasoning_opened_in_prompt, options.reasoning_tags);
    ParsedOutput out = parse_tool_calls(rest, options);
    if (options.json_reply) out.content = json_reply_content(out.content, false);
    out.reasoning_content = std::move(reasoning);
    return out;
}

Json ParsedOutput::tool_calls_json() const {
    Json calls = Json::array();
    for (const auto& c : tool_calls) {
        calls.push_back({{"id", c.id},
                         {"type", "function"},
                         {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    return calls;
}

Json ParsedOutput::to_message_json() const {
    Json m = {{"role", "assistant"}};
    m["content"] = content.empty() && !tool_calls.empty() ? Json() : Json(content);
    if (!reasoning_content.empty()) m["reasoning_content"] = reasoning_content;
    if (!tool_calls.empty()) m["tool_calls"] = tool_calls_json();
    return m;
}

}  // namespace engine::chat
