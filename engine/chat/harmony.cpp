#include "engine/chat/harmony.h"

#include <algorithm>
#include <array>

#include "engine/chat/text_scan.h"

namespace engine::chat {

namespace {

constexpr std::string_view kStart = "<|start|>", kChannel = "<|channel|>", kMessage = "<|message|>",
                           kConstrain = "<|constrain|>", kTo = " to=";
// What ends a message's text. <|call|> and <|return|> end generation (the reply seldom shows them).
constexpr std::array<std::string_view, 4> kEnds = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};

// The first end marker at or after a position, for positions that only grow: each marker's next
// occurrence is remembered, so a reply of many messages is scanned once per marker (not once per message,
// which made a hostile reply quadratic).
class EndFinder {
  public:
    explicit EndFinder(std::string_view text) : text_(text) { next_.fill(kUnknown); }
    // {position, marker length}; npos when none.
    std::pair<size_t, size_t> find(size_t from) {
        std::pair<size_t, size_t> best{std::string_view::npos, 0};
        for (size_t k = 0; k < kEnds.size(); ++k) {
            // Still ahead: the first occurrence after `from` too. Not found once: not found later either.
            if (next_[k] == kUnknown || (next_[k] != std::string_view::npos && next_[k] < from))
                next_[k] = text_.find(kEnds[k], from);
            if (next_[k] < best.first) best = {next_[k], kEnds[k].size()};
        }
        return best;
    }

  private:
    static constexpr size_t kUnknown = std::string_view::npos - 1;
    std::string_view text_;
    std::array<size_t, kEnds.size()> next_{};
};

// A header's fields: "<|channel|>final", " to=functions.x", "<|constrain|>json", "assistant" (a role),
// " json" (a content type after the channel), in any order.
void read_header(std::string_view h, HarmonyMessage& m) {
    size_t i = 0;
    auto word_end = [&](size_t from) {
        size_t j = from;
        while (j < h.size() && !is_space(h[j]) && h[j] != '<') ++j;
        return j;
    };
    while (i < h.size()) {
        if (h.substr(i, kChannel.size()) == kChannel) {
            const size_t b = i + kChannel.size(), e = word_end(b);
            m.channel = std::string(h.substr(b, e - b));
            i = e;
        } else if (h.substr(i, kTo.size()) == kTo) {
            const size_t b = i + kTo.size(), e = word_end(b);
            m.recipient = std::string(h.substr(b, e - b));
            i = e;
        } else if (h.substr(i, kConstrain.size()) == kConstrain) {
            i = word_end(i + kConstrain.size());
        } else {
            ++i;  // the role, a content type, spaces
        }
    }
}

}  // namespace

std::vector<HarmonyMessage> split_harmony(std::string_view text) {
    std::vector<HarmonyMessage> out;
    size_t pos = 0;
    // Text before the first header (a model that answers without one) is a message of its own.
    // (A recipient opens a header only at the start: after the prompt's "<|start|>assistant".)
    const size_t first = text.substr(0, kTo.size()) == kTo
                             ? 0
                             : std::min({text.find(kChannel), text.find(kMessage), text.find(kStart)});
    if (first != 0 && !text.empty()) {
        HarmonyMessage m;
        m.has_body = true;
        const size_t e = std::min(first, text.size());
        std::string_view body = text.substr(0, e);
        if (first == std::string_view::npos) {
            size_t hold = 0;
            for (std::string_view w : {kChannel, kMessage, kStart})
                hold = std::max(hold, partial_suffix(body, w));
            body.remove_suffix(hold);
        }
        m.text = std::string(body);
        m.text_end = body.size();
        m.complete = first != std::string_view::npos;
        out.push_back(std::move(m));
        if (first == std::string_view::npos) return out;
        pos = first;
    }
    EndFinder ends(text);
    while (pos < text.size()) {
        HarmonyMessage m;
        m.start = pos;
        if (text.substr(pos, kStart.size()) == kStart) pos += kStart.size();
        const size_t body = text.find(kMessage, pos);
        read_header(text.substr(pos, body == std::string_view::npos ? std::string_view::npos : body - pos),
                    m);
        if (body == std::string_view::npos) {  // the header is still being written
            out.push_back(std::move(m));
            break;
        }
        m.has_body = true;
        const size_t b = body + kMessage.size();
        const auto [end, len] = ends.find(b);
        if (end == std::string_view::npos) {
            std::string_view t = text.substr(b);
            size_t hold = 0;
            for (std::string_view e : kEnds) hold = std::max(hold, partial_suffix(t, e));
            t.remove_suffix(hold);
            m.text = std::string(t);
            m.text_end = b + t.size();
            out.push_back(std::move(m));
            break;
        }
        m.text = std::string(text.substr(b, end - b));
        m.text_end = end;
        m.complete = true;
        out.push_back(std::move(m));
        // <|start|> begins the next message itself; the other markers are followed by it.
        pos = text.substr(end, kStart.size()) == kStart ? end : end + len;
    }
    return out;
}

std::string harmony_function(const HarmonyMessage& m) {
    constexpr std::string_view kFunctions = "functions.";
    if (m.recipient.substr(0, kFunctions.size()) == kFunctions) return m.recipient.substr(kFunctions.size());
    return "";
}

bool harmony_to_tool(const HarmonyMessage& m) {
    return !m.recipient.empty() && m.recipient != "assistant" && m.recipient != "user";
}

HarmonyReading read_harmony(const std::vector<HarmonyMessage>& messages, bool with_calls) {
    HarmonyReading r;
    for (size_t i = 0; i < messages.size(); ++i) {
        const HarmonyMessage& m = messages[i];
        const bool to_function = !harmony_function(m).empty();
        r.call_seen = r.call_seen || to_function;
        if (!m.has_body) break;  // a header still being written
        if (harmony_to_tool(m)) {
            if (to_function && with_calls) r.calls.push_back(i);
            continue;
        }
        if (m.channel == "analysis") {
            r.reasoning += m.text;
        } else {
            r.content += m.text;
            if (m.channel == "final") break;  // the answer: what may follow it is not read
        }
    }
    if (trim_view(r.reasoning).empty()) r.reasoning.clear();
    return r;
}

std::string harmony_raw_content(const std::vector<HarmonyMessage>& messages) {
    std::string out;
    for (const auto& m : messages) {
        if (!m.has_body || harmony_to_tool(m)) break;
        if (m.channel == "analysis")
            out += std::string(kChannel) + "analysis" + std::string(kMessage) + m.text +
                   (m.complete ? "<|end|>" : "");
        else
            out += m.text;
    }
    return out;
}

ParsedOutput parse_harmony(std::string_view text, const ParseOptions& options) {
    ParsedOutput out;
    const auto messages = split_harmony(text);
    const bool with_calls = options.tool_format == ToolCallFormat::Harmony;
    HarmonyReading r = read_harmony(messages, with_calls);
    for (size_t i : r.calls) {
        ToolCall call;
        call.id = options.id_prefix + std::to_string(out.tool_calls.size());
        call.name = harmony_function(messages[i]);
        call.arguments = std::string(trim_view(messages[i].text));
        out.tool_calls.push_back(std::move(call));
    }
    if (options.extract_reasoning) {
        out.reasoning_content = std::move(r.reasoning);
        out.content = std::move(r.content);
    } else {
        out.content = std::string(trim_view(harmony_raw_content(messages)));
    }
    return out;
}

std::vector<PartialToolCall> scan_harmony_calls(std::string_view text, const ParseOptions& options) {
    std::vector<PartialToolCall> calls;
    const auto messages = split_harmony(text);
    // A call whose header is not complete is not read (its name may still grow).
    for (size_t i : read_harmony(messages, options.tool_format == ToolCallFormat::Harmony).calls) {
        const HarmonyMessage& m = messages[i];
        PartialToolCall c;
        c.id = options.id_prefix + std::to_string(calls.size());
        c.name = harmony_function(m);
        c.named = true;
        // Trailing space may belong to the arguments or be trimmed at the end: held back until then.
        c.arguments = std::string(m.complete ? trim_view(m.text) : ltrim_view(m.text));
        if (!m.complete)
            while (!c.arguments.empty() && is_space(c.arguments.back())) c.arguments.pop_back();
        c.complete = m.complete;
        calls.push_back(std::move(c));
    }
    return calls;
}

}  // namespace engine::chat
