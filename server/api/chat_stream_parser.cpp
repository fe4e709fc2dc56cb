#include "server/api/chat_stream_parser.h"

#include <algorithm>

#include "engine/chat/text_scan.h"

namespace api {

namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

// The whole reply's parsers (engine/chat) trim with the same notion of space (std::isspace: \f and \v too),
// so nothing streamed differs from what a non-streamed reply would hold.
using engine::chat::is_space;

std::string_view ltrim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    return s;
}

std::string_view rtrim(std::string_view s) {
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

// Length of the longest suffix of `text` that is a proper prefix of `word`.
size_t partial_suffix(std::string_view text, std::string_view word) {
    for (size_t n = std::min(text.size(), word.size() - 1); n > 0; --n)
        if (text.substr(text.size() - n) == word.substr(0, n)) return n;
    return 0;
}

// `now` extends what was sent: the part not sent yet ("" when it does not extend it).
std::string extension(const std::string& sent, std::string_view now) {
    if (now.size() <= sent.size() || now.substr(0, sent.size()) != sent) return "";
    return std::string(now.substr(sent.size()));
}

}  // namespace

ChatStreamParser::ChatStreamParser(engine::chat::ParseOptions options, std::vector<std::string> triggers)
    : options_(std::move(options)), triggers_(std::move(triggers)) {}

ChatStreamParser::Delta ChatStreamParser::certain() const {
    Delta d;
    std::string_view body = text_;
    if (options_.extract_reasoning) {
        size_t start = 0;
        bool in_reasoning = options_.reasoning_opened_in_prompt;
        if (!in_reasoning) {
            const std::string_view lead = ltrim(body);
            if (lead.size() < kOpen.size() && kOpen.substr(0, lead.size()) == lead) return d;  // maybe <think>
            if (lead.substr(0, kOpen.size()) == kOpen) {
                in_reasoning = true;
                start = body.size() - lead.size() + kOpen.size();
            }
        }
        if (in_reasoning) {
            const size_t end = body.find(kClose, start);
            std::string_view r = ltrim(body.substr(start, end == std::string_view::npos ? std::string_view::npos
                                                                                        : end - start));
            if (end == std::string_view::npos) {
                r.remove_suffix(partial_suffix(r, kClose));
                d.reasoning = std::string(rtrim(r));  // trailing space may end up trimmed
                return d;
            }
            d.reasoning = std::string(rtrim(r));
            body = ltrim(body.substr(end + kClose.size()));
        }
    }
    size_t safe = body.size();
    for (const auto& t : triggers_) {
        const size_t at = body.find(t);
        if (at != std::string_view::npos) {
            safe = std::min(safe, at);
        } else {
            safe = std::min(safe, body.size() - partial_suffix(body, t));
        }
    }
    d.content = std::string(body.substr(0, safe));
    if (!triggers_.empty()) d.content = std::string(rtrim(d.content));  // content before calls is trimmed
    return d;
}

ChatStreamParser::Delta ChatStreamParser::feed(const std::string& text) {
    text_ += text;
    const Delta now = certain();
    Delta out;
    out.reasoning = extension(sent_reasoning_, now.reasoning);
    out.content = extension(sent_content_, now.content);
    sent_reasoning_ += out.reasoning;
    sent_content_ += out.content;
    return out;
}

ChatStreamParser::Final ChatStreamParser::finish() {
    Final f;
    f.parsed = engine::chat::parse_output(text_, options_);
    f.delta.reasoning = extension(sent_reasoning_, f.parsed.reasoning_content);
    f.delta.content = extension(sent_content_, f.parsed.content);
    sent_reasoning_ += f.delta.reasoning;
    sent_content_ += f.delta.content;
    return f;
}

nlohmann::json parsed_message_json(const engine::chat::ParsedOutput& parsed) {
    // A model may write invalid UTF-8 (byte tokens): such bytes become U+FFFD, as in every other response
    // (a plain dump() throws on them, which made the reply a 500).
    return nlohmann::json::parse(
        parsed.to_message_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace api
