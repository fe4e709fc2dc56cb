// Tool-call syntaxes of the common model families. Text that does not parse as a call is kept as
// content rather than dropped, so a malformed call still reaches the client.
#include <algorithm>
#include <cctype>
#include <optional>

#include "engine/chat/chat_parser.h"
#include "engine/chat/text_scan.h"

namespace engine::chat {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

size_t skip_space(std::string_view s, size_t pos) {
    while (pos < s.size() && is_space(s[pos])) ++pos;
    return pos;
}

// End (exclusive) of the JSON object or array that opens at s[start], honouring strings and
// escapes; npos when it is not closed.
size_t json_end(std::string_view s, size_t start) {
    int depth = 0;
    bool in_string = false;
    for (size_t i = start; i < s.size(); ++i) {
        const char c = s[i];
        if (in_string) {
            if (c == '\\') {
                ++i;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) return i + 1;
        }
    }
    return std::string_view::npos;
}

// Parse the JSON object or array at s[pos] (after whitespace) and move pos past it.
std::optional<Json> take_json(std::string_view s, size_t& pos) {
    const size_t start = skip_space(s, pos);
    if (start >= s.size() || (s[start] != '{' && s[start] != '[')) return std::nullopt;
    const size_t end = json_end(s, start);
    if (end == std::string_view::npos) return std::nullopt;
    Json j = Json::parse(s.substr(start, end - start), nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    pos = end;
    return j;
}

// A JSON scalar/object for a parameter value if it parses as one, else the raw string.
Json loose_value(std::string_view text) {
    Json j = Json::parse(text, nullptr, false);
    return j.is_discarded() ? Json(std::string(text)) : j;
}

class Calls {
  public:
    explicit Calls(const std::string& id_prefix) : prefix_(id_prefix) {}

    void add(std::string name, const Json& arguments, std::string id = "") {
        if (id.empty()) id = prefix_ + std::to_string(out.tool_calls.size());
        std::string args = arguments.is_string() ? arguments.get<std::string>()
                           : arguments.is_null() ? "{}"
                                                 : arguments.dump();
        out.tool_calls.push_back({std::move(id), std::move(name), std::move(args)});
    }

    // {"name": ..., "arguments" | "parameters": ..., ["id"]}; false when not shaped like a call.
    bool add_object(const Json& call) {
        if (!call.is_object()) return false;
        const Json* fn = &call;
        if (call.contains("function") && call["function"].is_object())
            fn = &call["function"];  // OpenAI shape
        if (!fn->contains("name") || !(*fn)["name"].is_string()) return false;
        Json args = fn->contains("arguments") ? (*fn)["arguments"] : fn->value("parameters", Json::object());
        const std::string id =
            call.contains("id") && call["id"].is_string() ? call["id"].get<std::string>() : "";
        add((*fn)["name"].get<std::string>(), args, id);
        return true;
    }

    ParsedOutput out;

  private:
    const std::string& prefix_;
};

// Qwen3-Coder: <function=name><parameter=key>value</parameter>...</function>
bool parse_xml_function(std::string_view body, Calls& calls) {
    constexpr std::string_view open = "<function=", param_open = "<parameter=", param_close = "</parameter>";
    if (!starts_with(body, open)) return false;
    const size_t name_end = body.find('>');
    if (name_end == std::string_view::npos) return false;
    const std::string name(trim_view(body.substr(open.size(), name_end - open.size())));
    Json args = Json::object();
    size_t pos = name_end + 1;
    for (size_t p = body.find(param_open, pos); p != std::string_view::npos; p = body.find(param_open, pos)) {
        const size_t key_end = body.find('>', p);
        if (key_end == std::string_view::npos) return false;
        const size_t value_end = body.find(param_close, key_end);
        const std::string key(trim_view(body.substr(p + param_open.size(), key_end - p - param_open.size())));
        std::string_view value =
            body.substr(key_end + 1, value_end == std::string_view::npos ? std::string_view::npos
                                                                         : value_end - key_end - 1);
        if (starts_with(value, "\n")) value.remove_prefix(1);
        if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
        args[key] = loose_value(value);
        if (value_end == std::string_view::npos) break;
        pos = value_end + param_close.size();
    }
    calls.add(name, args);
    return true;
}

bool parse_hermes_body(std::string_view body, Calls& calls) {
    body = trim_view(body);
    if (starts_with(body, "<function=")) return parse_xml_function(body, calls);
    size_t pos = 0;
    const auto j = take_json(body, pos);
    return j && skip_space(body, pos) == body.size() && calls.add_object(*j);
}

ParsedOutput parse_hermes(std::string_view text, Calls& calls) {
    constexpr std::string_view open = "<tool_call>", close = "</tool_call>";
    std::string content;
    size_t pos = 0;
    while (true) {
        const size_t start = text.find(open, pos);
        if (start == std::string_view::npos) {
            content += text.substr(pos);
            break;
        }
        content += text.substr(pos, start - pos);
        const size_t body = start + open.size();
        const size_t end = text.find(close, body);
        const std::string_view inner =
            text.substr(body, end == std::string_view::npos ? std::string_view::npos : end - body);
        if (!parse_hermes_body(inner, calls)) {
            content += text.substr(
                start, end == std::string_view::npos ? std::string_view::npos : end + close.size() - start);
        }
        if (end == std::string_view::npos) break;
        pos = end + close.size();
    }
    calls.out.content = std::string(trim_view(content));
    return calls.out;
}

ParsedOutput parse_llama3_json(std::string_view text, Calls& calls) {
    std::string_view t = trim_view(text);
    if (starts_with(t, "<|python_tag|>")) t = trim_view(t.substr(14));
    size_t pos = 0;
    while (pos < t.size()) {
        const auto j = take_json(t, pos);
        if (!j || !j->is_object() || !(j->contains("parameters") || j->contains("arguments")) ||
            !calls.add_object(*j)) {
            calls.out.tool_calls.clear();
            calls.out.content = std::string(text);
            return calls.out;
        }
        pos = skip_space(t, pos);
        if (pos < t.size() && t[pos] == ';') ++pos;
        pos = skip_space(t, pos);
    }
    return calls.out;
}

ParsedOutput parse_mistral(std::string_view text, Calls& calls) {
    constexpr std::string_view marker = "[TOOL_CALLS]", args_tag = "[ARGS]", id_tag = "[CALL_ID]";
    const size_t first = text.find(marker);
    if (first == std::string_view::npos) {
        calls.out.content = std::string(text);
        return calls.out;
    }
    std::string content(text.substr(0, first));
    size_t pos = first;
    while (starts_with(text.substr(pos), marker)) {
        pos = skip_space(text, pos + marker.size());
        const size_t segment = pos;
        bool ok = false;
        if (pos < text.size() && text[pos] == '[') {  // [TOOL_CALLS][{...}, {...}]
            const auto j = take_json(text, pos);
            ok = j && j->is_array();
            if (ok) {
                for (const auto& call : *j) ok = calls.add_object(call) && ok;
            }
        } else {  // [TOOL_CALLS]name[CALL_ID]id[ARGS]{...}
            const size_t args_at = text.find(args_tag, pos);
            if (args_at != std::string_view::npos) {
                std::string_view head = text.substr(pos, args_at - pos);
                std::string id;
                if (const size_t id_at = head.find(id_tag); id_at != std::string_view::npos) {
                    id = std::string(trim_view(head.substr(id_at + id_tag.size())));
                    head = head.substr(0, id_at);
                }
                pos = args_at + args_tag.size();
                const auto j = take_json(text, pos);
                ok = j.has_value() && !trim_view(head).empty();
                if (ok) calls.add(std::string(trim_view(head)), *j, id);
            }
        }
        if (!ok) {
            content += text.substr(segment - marker.size());
            pos = text.size();
            break;
        }
        pos = skip_space(text, pos);
    }
    content += text.substr(std::min(pos, text.size()));
    calls.out.content = std::string(trim_view(content));
    return calls.out;
}

ParsedOutput parse_function_tags(std::string_view text, Calls& calls) {
    constexpr std::string_view open = "<function=", close = "</function>";
    std::string content;
    size_t pos = 0;
    while (true) {
        const size_t start = text.find(open, pos);
        if (start == std::string_view::npos) {
            content += text.substr(pos);
            break;
        }
        content += text.substr(pos, start - pos);
        const size_t name_end = text.find('>', start);
        const size_t end = name_end == std::string_view::npos ? name_end : text.find(close, name_end);
        bool ok = false;
        if (end != std::string_view::npos) {
            const std::string name(
                trim_view(text.substr(start + open.size(), name_end - start - open.size())));
            Json args = Json::parse(trim_view(text.substr(name_end + 1, end - name_end - 1)), nullptr, false);
            ok = !name.empty() && !args.is_discarded();
            if (ok) calls.add(name, args);
        }
        if (!ok) {
            content += text.substr(start);
            break;
        }
        pos = end + close.size();
    }
    calls.out.content = std::string(trim_view(content));
    return calls.out;
}

// DeepSeek R1: <｜tool▁call▁begin｜>function<｜tool▁sep｜>name\n```json\n{...}\n```<｜tool▁call▁end｜>
// DeepSeek V3.1: <｜tool▁call▁begin｜>name<｜tool▁sep｜>{...}<｜tool▁call▁end｜>
ParsedOutput parse_deepseek(std::string_view text, Calls& calls) {
    constexpr std::string_view calls_begin = "<｜tool▁calls▁begin｜>", call_begin = "<｜tool▁call▁begin｜>",
                               call_end = "<｜tool▁call▁end｜>", sep = "<｜tool▁sep｜>";
    size_t first = text.find(calls_begin);
    if (first == std::string_view::npos) first = text.find(call_begin);
    if (first == std::string_view::npos) {
        calls.out.content = std::string(text);
        return calls.out;
    }
    size_t pos = first;
    for (size_t b = text.find(call_begin, pos); b != std::string_view::npos; b = text.find(call_begin, pos)) {
        const size_t e = text.find(call_end, b);
        if (e == std::string_view::npos) break;
        const std::string_view inner = text.substr(b + call_begin.size(), e - b - call_begin.size());
        pos = e + call_end.size();
        const size_t s = inner.find(sep);
        if (s == std::string_view::npos) continue;
        const std::string_view head = trim_view(inner.substr(0, s));
        std::string_view tail = inner.substr(s + sep.size());
        if (head == "function") {
            const size_t nl = tail.find('\n');
            const std::string name(trim_view(tail.substr(0, nl)));
            std::string_view body = nl == std::string_view::npos ? std::string_view() : tail.substr(nl + 1);
            body = trim_view(body);
            if (starts_with(body, "```json")) body.remove_prefix(7);
            if (const size_t fence = body.rfind("```"); fence != std::string_view::npos)
                body = body.substr(0, fence);
            calls.add(name, loose_value(trim_view(body)));
        } else {
            calls.add(std::string(head), loose_value(trim_view(tail)));
        }
    }
    calls.out.content = std::string(trim_view(text.substr(0, first)));
    return calls.out;
}

ParsedOutput parse_generic(std::string_view text, Calls& calls) {
    const std::string_view t = trim_view(text);
    size_t pos = 0;
    const auto j = take_json(t, pos);
    if (!j || !j->is_object() || skip_space(t, pos) != t.size()) {
        calls.out.content = std::string(text);
        return calls.out;
    }
    if (j->contains("tool_calls") && (*j)["tool_calls"].is_array()) {
        for (const auto& call : (*j)["tool_calls"]) calls.add_object(call);
    } else if (j->contains("tool_call")) {
        calls.add_object((*j)["tool_call"]);
    } else if (j->contains("response")) {
        const Json& r = (*j)["response"];
        calls.out.content = r.is_string() ? r.get<std::string>() : r.dump();
    } else {
        calls.out.content = std::string(text);
    }
    return calls.out;
}

}  // namespace

ParsedOutput parse_tool_calls(std::string_view text, ToolCallFormat format, const std::string& id_prefix) {
    Calls calls(id_prefix);
    switch (format) {
        case ToolCallFormat::Hermes:
            return parse_hermes(text, calls);
        case ToolCallFormat::Llama3Json:
            return parse_llama3_json(text, calls);
        case ToolCallFormat::Mistral:
            return parse_mistral(text, calls);
        case ToolCallFormat::FunctionTag:
            return parse_function_tags(text, calls);
        case ToolCallFormat::DeepSeek:
            return parse_deepseek(text, calls);
        case ToolCallFormat::Generic:
            return parse_generic(text, calls);
        case ToolCallFormat::None:
            break;
    }
    calls.out.content = std::string(text);
    return calls.out;
}

std::string_view tool_call_format_name(ToolCallFormat format) {
    switch (format) {
        case ToolCallFormat::None:
            return "none";
        case ToolCallFormat::Generic:
            return "generic";
        case ToolCallFormat::Hermes:
            return "hermes";
        case ToolCallFormat::Llama3Json:
            return "llama3-json";
        case ToolCallFormat::Mistral:
            return "mistral";
        case ToolCallFormat::FunctionTag:
            return "function-tag";
        case ToolCallFormat::DeepSeek:
            return "deepseek";
    }
    return "none";
}

ToolCallFormat detect_tool_call_format(std::string_view src) {
    auto has = [&](std::string_view needle) { return src.find(needle) != std::string_view::npos; };
    if (has("<tool_call>")) return ToolCallFormat::Hermes;
    if (has("[TOOL_CALLS]")) return ToolCallFormat::Mistral;
    if (has("<｜tool▁call▁begin｜>")) return ToolCallFormat::DeepSeek;
    if (has("<function=")) return ToolCallFormat::FunctionTag;
    if (has("<|start_header_id|>") && has("\"parameters\"")) return ToolCallFormat::Llama3Json;
    if (has("tools") || has("tool_calls")) return ToolCallFormat::Generic;
    return ToolCallFormat::None;
}

}  // namespace engine::chat
