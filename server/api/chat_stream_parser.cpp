#include "server/api/chat_stream_parser.h"

#include <algorithm>

#include "engine/chat/harmony.h"
#include "engine/chat/json_reply.h"
#include "engine/chat/text_scan.h"

namespace api {

namespace {

// The whole reply's parsers (engine/chat) trim with the same notion of space (std::isspace: \f and \v too),
// so nothing streamed differs from what a non-streamed reply would hold.
using engine::chat::partial_suffix;
constexpr auto ltrim = engine::chat::ltrim_view;
constexpr auto rtrim = engine::chat::rtrim_view;

// `now` extends what was sent: the part not sent yet ("" when it does not extend it).
std::string extension(const std::string& sent, std::string_view now) {
    if (now.size() <= sent.size() || now.substr(0, sent.size()) != sent) return "";
    return std::string(now.substr(sent.size()));
}

// Where a trigger starts in the body: its first occurrence, or the start of one that the end of the body
// cuts short (then `complete` is false); body.size() if neither. Space after an opening brace of the trigger
// is read as a JSON object's parser reads it: the whole reply's parse unwraps {"response": ...} written as
// { "response" or across lines too, which an exact match streamed as raw JSON.
struct TriggerAt {
    size_t at;
    bool complete;
};

TriggerAt find_trigger(std::string_view body, std::string_view t) {
    if (t.empty()) return {body.size(), false};
    for (size_t i = body.find(t.front()); i != std::string_view::npos; i = body.find(t.front(), i + 1)) {
        size_t j = 0, k = i;
        for (;;) {
            if (j == t.size()) return {i, true};
            if (k == body.size()) return {i, false};
            if (j > 0 && t[j - 1] == '{' && t[j] == '"' && engine::chat::is_space(body[k])) {
                ++k;
                continue;
            }
            if (body[k] != t[j]) break;
            ++j;
            ++k;
        }
    }
    return {body.size(), false};
}

}  // namespace

ChatStreamParser::ChatStreamParser(engine::chat::ParseOptions options, std::vector<std::string> triggers)
    : options_(std::move(options)), triggers_(std::move(triggers)) {}

// gpt-oss: what the channels say so far (harmony.h), read as the whole reply's parse reads them; a message
// still being written holds back only what may be the start of a marker. Analysis is the reasoning unless
// it stays in the content.
ChatStreamParser::Certain ChatStreamParser::harmony_certain() const {
    Certain d;
    d.body = 0;
    const auto messages = engine::chat::split_harmony(text_);
    engine::chat::HarmonyReading r =
        engine::chat::read_harmony(messages, options_.tool_format == engine::chat::ToolCallFormat::Harmony);
    d.triggered = r.call_seen;
    if (!options_.extract_reasoning) {
        // Trailing space of a message still being written may be trimmed at the end: held back.
        d.content = std::string(rtrim(ltrim(engine::chat::harmony_raw_content(messages))));
    } else {
        d.reasoning = std::move(r.reasoning);
        d.content = std::move(r.content);
    }
    return harmony_json_reply(std::move(d));
}

// Under a response format the content is the JSON value alone, as the whole reply's parse gives it.
ChatStreamParser::Certain ChatStreamParser::harmony_json_reply(Certain d) const {
    if (options_.json_reply) {
        if (json_body_ != 0) {
            json_reader_.reset();
            json_body_ = 0;
        }
        d.content = json_reader_.content(d.content, true);
    }
    return d;
}

ChatStreamParser::Certain ChatStreamParser::certain() const {
    if (options_.harmony) return harmony_certain();
    Certain d;
    std::string_view body = text_;
    if (options_.extract_reasoning) {
        const std::string_view open = options_.reasoning_tags.open, close = options_.reasoning_tags.close;
        size_t start = 0;
        bool in_reasoning = options_.reasoning_opened_in_prompt;
        if (!in_reasoning) {
            const std::string_view lead = ltrim(body);
            if (lead.size() < open.size() && open.substr(0, lead.size()) == lead) return d;  // maybe <think>
            if (lead.substr(0, open.size()) == open) {
                in_reasoning = true;
                start = body.size() - lead.size() + open.size();
            }
        }
        if (in_reasoning) {
            const size_t end = body.find(close, start);
            std::string_view r = ltrim(body.substr(start, end == std::string_view::npos ? std::string_view::npos
                                                                                        : end - start));
            if (end == std::string_view::npos) {
                r.remove_suffix(partial_suffix(r, close));
                d.reasoning = std::string(rtrim(r));  // trailing space may end up trimmed
                return d;
            }
            d.reasoning = std::string(rtrim(r));
            body = ltrim(body.substr(end + close.size()));
        }
    }
    d.body = text_.size() - body.size();
    size_t safe = body.size();
    for (const auto& t : triggers_) {
        const TriggerAt found = find_trigger(body, t);
        safe = std::min(safe, found.at);
        d.triggered = d.triggered || found.complete;
    }
    d.content = std::string(body.substr(0, safe));
    if (!triggers_.empty()) d.content = std::string(rtrim(d.content));  // content before calls is trimmed
    if (options_.json_reply) {
        // The body only grows while it starts at the same place: the reader then reads just what was added.
        if (d.body != json_body_) {
            json_reader_.reset();
            json_body_ = d.body;
        }
        d.content = json_reader_.content(d.content, true);
    }
    return d;
}

ChatStreamParser::CallDelta ChatStreamParser::call_delta(size_t index, const std::string& id, const std::string& name,
                                                         const std::string& arguments) {
    CallDelta d;
    d.index = index;
    if (index == sent_calls_.size()) {
        d.first = true;
        d.id = id;
        d.name = name;
        d.arguments = arguments;
        sent_calls_.push_back({id, arguments});
        return d;
    }
    d.arguments = extension(sent_calls_[index].arguments, arguments);
    sent_calls_[index].arguments += d.arguments;
    return d;
}

ChatStreamParser::Delta ChatStreamParser::feed(const std::string& text) {
    text_ += text;
    const Certain now = certain();
    Delta out;
    out.reasoning = extension(sent_reasoning_, now.reasoning);
    out.content = extension(sent_content_, now.content);
    sent_reasoning_ += out.reasoning;
    sent_content_ += out.content;
    if (!now.triggered) return out;
    // Calls go out in order, each once its name is complete.
    const auto calls = engine::chat::scan_tool_calls(std::string_view(text_).substr(now.body), options_);
    for (size_t k = 0; k < calls.size() && calls[k].named && k <= sent_calls_.size(); ++k) {
        CallDelta d = call_delta(k, calls[k].id, calls[k].name, calls[k].arguments);
        if (d.first || !d.arguments.empty()) out.calls.push_back(std::move(d));
    }
    return out;
}

void drop_unfinished_call(engine::chat::ParsedOutput& parsed, const std::vector<std::string>& triggers) {
    size_t cut = std::string::npos;
    // Triggers without their leading whitespace (" functools["), which the trimmed content may have lost.
    for (const auto& t : triggers)
        if (const std::string_view bare = ltrim(t); !bare.empty()) cut = std::min(cut, parsed.content.find(bare));
    if (cut == std::string::npos) return;
    parsed.content = std::string(rtrim(std::string_view(parsed.content).substr(0, cut)));
}

engine::chat::ParsedOutput parse_reply(const std::string& text, const engine::chat::ParseOptions& options,
                                       const std::vector<std::string>& triggers, bool truncated) {
    engine::chat::ParsedOutput parsed = engine::chat::parse_output(text, options);
    if (truncated && options.harmony) {
        // A call ends generation (<|call|>, which the text does not show): cut by the token limit instead,
        // its arguments may be unfinished.
        const auto calls = engine::chat::scan_harmony_calls(text, options);
        if (!calls.empty() && !calls.back().complete && !parsed.tool_calls.empty())
            parsed.tool_calls.pop_back();
    } else if (truncated) {
        drop_unfinished_call(parsed, triggers);
    }
    return parsed;
}

ChatStreamParser::Final ChatStreamParser::finish(bool truncated) {
    Final f;
    f.parsed = parse_reply(text_, options_, triggers_, truncated);
    f.delta.reasoning = extension(sent_reasoning_, f.parsed.reasoning_content);
    f.delta.content = extension(sent_content_, f.parsed.content);
    sent_reasoning_ += f.delta.reasoning;
    sent_content_ += f.delta.content;
    for (size_t k = 0; k < f.parsed.tool_calls.size(); ++k) {
        auto& call = f.parsed.tool_calls[k];
        if (k < sent_calls_.size()) call.id = sent_calls_[k].id;
        CallDelta d = call_delta(k, call.id, call.name, call.arguments);
        if (d.first || !d.arguments.empty()) f.delta.calls.push_back(std::move(d));
    }
    return f;
}

nlohmann::json parsed_message_json(const engine::chat::ParsedOutput& parsed) {
    // A model may write invalid UTF-8 (byte tokens): such bytes become U+FFFD, as in every other response
    // (a plain dump() throws on them, which made the reply a 500).
    return nlohmann::json::parse(
        parsed.to_message_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace api
