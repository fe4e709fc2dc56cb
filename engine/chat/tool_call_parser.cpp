// Tool-call syntaxes of the common model families, each read by one function over a Scan (see
// tool_call_scan.h), so the same code parses a whole reply and the beginning of one that is still
// being generated. Text that does not parse as a call is kept as content rather than dropped, so a
// malformed call still reaches the client.
//
// Arguments are JSON text: for formats that write them as JSON, the model's text without the white
// space outside strings (so a stream can send them as they grow); for the formats that write each
// parameter on its own (the XML ones), an object built parameter by parameter in the order written.
#include <algorithm>
#include <cctype>

#include "engine/chat/chat_parser.h"
#include "engine/chat/harmony.h"
#include "engine/chat/text_scan.h"
#include "engine/chat/tool_call_scan.h"

namespace engine::chat {

namespace {

using scan::Calls;
using scan::Got;
using scan::Scan;

// Parameters of tagged reads pass a Got through unless it is Yes.
#define TRY(expr)                                  \
    do {                                           \
        const Got got_ = (expr);                   \
        if (got_ != Got::Yes) return got_;         \
    } while (false)

// Searching for a block's opening marker: the text before it is content. Yes when found; otherwise
// the reply has no more calls (a whole text) or may still show one (a growing text).
Got next_block(Scan& s, Calls& calls, std::string_view marker) {
    std::string_view before;
    const Got g = s.until(marker, before);
    calls.content(before);
    if (g == Got::Yes) calls.begin(s.pos() - marker.size());
    return g;
}

// The end of a format function that found no further block: done, or more text may come.
Got no_more(Got g) { return g == Got::More ? Got::More : Got::Yes; }

// A closing marker that a whole reply may leave out at its very end.
Got closing(Scan& s, std::string_view marker) {
    s.space();
    const Got g = s.lit(marker);
    if (g == Got::No && s.at_end() && !s.growing()) return Got::Yes;
    return g;
}

// Arguments from the raw JSON text of their value, complete or not: objects and arrays grow with the
// text; a string (arguments already encoded as JSON text) and other values only once complete.
void set_arguments(PartialToolCall& call, std::string_view raw, bool complete) {
    if (!raw.empty() && (raw[0] == '{' || raw[0] == '[')) {
        call.arguments = scan::minify_json(raw);
    } else if (complete) {
        const Json v = Json::parse(raw, nullptr, false);
        call.arguments = v.is_string() ? v.get<std::string>() : v.is_null() ? "{}" : scan::minify_json(raw);
    }
}

// The JSON value of a call's arguments at the position.
Got json_arguments(Scan& s, PartialToolCall& call) {
    s.space();
    std::string_view raw;
    const Got g = s.json(raw);
    if (g != Got::No) set_arguments(call, raw, g == Got::Yes);
    return g;
}

// A call as a JSON object: {"name" | "tool_name": ..., "arguments" | "parameters": ..., "id": ...}, or
// OpenAI's {"type": "function", "function": {...}}. `has_args`: whether it named its arguments.
Got json_call(Scan& s, PartialToolCall& call, bool* has_args = nullptr) {
    TRY(s.lit("{"));
    bool args = false;
    for (bool first = true;; first = false) {
        s.space();
        const Got closed = s.lit("}");
        if (closed == Got::Yes) break;
        if (closed == Got::More) return Got::More;
        if (!first) {
            TRY(s.lit(","));
            s.space();
        }
        std::string key;
        TRY(s.json_string(key));
        s.space();
        TRY(s.lit(":"));
        s.space();
        if (key == "name" || key == "tool_name") {
            std::string name;
            TRY(s.json_string(name));
            call.name = std::move(name);
            call.named = true;
        } else if (key == "arguments" || key == "parameters") {
            TRY(json_arguments(s, call));
            args = true;
        } else if (key == "function" && s.peek() == '{') {
            TRY(json_call(s, call, &args));
        } else {
            std::string_view raw;
            TRY(s.json(raw));
            const Json v = Json::parse(raw);
            if (key == "id" && v.is_string()) call.id = v.get<std::string>();
        }
    }
    if (!call.named) return Got::No;
    if (!args) call.arguments = "{}";
    if (has_args) *has_args = args;
    return Got::Yes;
}

// [call, call, ...] of JSON call objects.
Got json_call_list(Scan& s, Calls& calls) {
    TRY(s.lit("["));
    s.space();
    if (const Got g = s.lit("]"); g != Got::No) return g;
    for (;;) {
        s.space();
        PartialToolCall& call = calls.open();
        TRY(json_call(s, call));
        call.complete = true;
        s.space();
        const Got g = s.lit(",");
        if (g == Got::More) return Got::More;
        if (g == Got::No) return s.lit("]");
    }
}

// A name written between markers, trimmed; not empty.
Got tag_name(Scan& s, PartialToolCall& call, std::string_view end) {
    std::string_view name;
    TRY(s.until(end, name));
    name = trim_view(name);
    if (name.empty()) return Got::No;
    call.name = std::string(name);
    call.named = true;
    return Got::Yes;
}

// <tool_call>{"name": ..., "arguments": ...}</tool_call>, any number, with text around them.
Got hermes(Scan& s, Calls& calls) {
    for (;;) {
        if (const Got g = next_block(s, calls, "<tool_call>"); g != Got::Yes) return no_more(g);
        s.space();
        PartialToolCall& call = calls.open();
        TRY(json_call(s, call));
        call.complete = true;
        TRY(closing(s, "</tool_call>"));
    }
}

// The whole reply is calls: [<|python_tag|>] {"name": ..., "parameters": ...} [; {...}]...
Got llama3_json(Scan& s, Calls& calls) {
    calls.begin(0);
    s.space();
    if (const Got g = s.lit("<|python_tag|>"); g == Got::More) return g;
    s.space();
    if (s.at_end()) return s.growing() ? Got::More : Got::No;
    for (;;) {
        PartialToolCall& call = calls.open();
        bool args = false;
        TRY(json_call(s, call, &args));
        if (!args) return Got::No;  // a JSON object, but not a call
        call.complete = true;
        s.space();
        const Got semi = s.lit(";");
        if (semi == Got::More) return semi;
        s.space();
        if (s.at_end()) return s.end();
        if (semi == Got::No && s.peek() != '{') return Got::No;
    }
}

// [TOOL_CALLS][{...}, ...] (Nemo) or [TOOL_CALLS]name[CALL_ID]id[ARGS]{...} (later models), repeated.
Got mistral(Scan& s, Calls& calls) {
    constexpr std::string_view marker = "[TOOL_CALLS]";
    if (const Got g = next_block(s, calls, marker); g != Got::Yes) return no_more(g);
    for (;;) {
        s.space();
        if (s.at_end()) return s.end();
        if (s.peek() == '[') {
            TRY(json_call_list(s, calls));
        } else {
            PartialToolCall& call = calls.open();
            std::string_view head;
            size_t which = 0;
            TRY(s.until_any({"[CALL_ID]", "[ARGS]"}, head, which));
            std::string id;
            if (which == 0) {
                std::string_view id_text;
                TRY(s.until("[ARGS]", id_text));
                id = std::string(trim_view(id_text));
            }
            head = trim_view(head);
            if (head.empty()) return Got::No;
            if (!id.empty()) call.id = id;
            call.name = std::string(head);
            call.named = true;
            TRY(json_arguments(s, call));
            call.complete = true;
        }
        s.space();
        const size_t at = s.pos();
        const Got g = s.lit(marker);
        if (g != Got::Yes) return no_more(g);
        calls.begin(at);
    }
}

// <function=name>{...}</function>, any number, with text around them.
Got function_tag(Scan& s, Calls& calls) {
    for (;;) {
        if (const Got g = next_block(s, calls, "<function="); g != Got::Yes) return no_more(g);
        PartialToolCall& call = calls.open();
        TRY(tag_name(s, call, ">"));
        TRY(json_arguments(s, call));
        call.complete = true;
        s.space();
        TRY(s.lit("</function>"));
    }
}

// DeepSeek R1: <｜tool▁call▁begin｜>function<｜tool▁sep｜>name\n```json\n{...}\n```<｜tool▁call▁end｜>
// DeepSeek V3.1: <｜tool▁call▁begin｜>name<｜tool▁sep｜>{...}<｜tool▁call▁end｜>
// inside <｜tool▁calls▁begin｜>...<｜tool▁calls▁end｜> (the closing marker may be missing). A call
// marker outside the section is text, as for a stream, which holds back only from the section's marker.
Got deepseek(Scan& s, Calls& calls) {
    constexpr std::string_view section = "<｜tool▁calls▁begin｜>", section_end = "<｜tool▁calls▁end｜>",
                               call_begin = "<｜tool▁call▁begin｜>", call_end = "<｜tool▁call▁end｜>",
                               sep = "<｜tool▁sep｜>";
    for (;;) {
        if (const Got g = next_block(s, calls, section); g != Got::Yes) return no_more(g);
        s.space();
        size_t at = s.pos();
        TRY(s.lit(call_begin));
        for (bool first = true;; first = false) {
            if (!first) calls.begin(at);  // the first call's block starts at the section's marker
            PartialToolCall& call = calls.open();
            std::string_view head;
            TRY(s.until(sep, head));
            if (trim_view(head) == "function") {
                TRY(tag_name(s, call, "\n"));
                s.space();
                if (const Got g = s.lit("```json"); g == Got::More) return g;
                TRY(json_arguments(s, call));
                call.complete = true;
                s.space();
                TRY(s.lit("```"));
            } else {
                head = trim_view(head);
                if (head.empty()) return Got::No;
                call.name = std::string(head);
                call.named = true;
                TRY(json_arguments(s, call));
                call.complete = true;
            }
            s.space();
            TRY(s.lit(call_end));
            s.space();
            at = s.pos();
            const Got next = s.lit(call_begin);
            if (next == Got::More) return next;
            if (next == Got::No) break;
        }
        if (const Got g = s.lit(section_end); g == Got::More) return g;
    }
}

// {"tool_calls": [...]} / {"tool_call": {...}} / {"response": "..."}: the whole reply is one object.
Got generic(Scan& s, Calls& calls) {
    calls.begin(0);
    s.space();
    TRY(s.lit("{"));
    s.space();
    std::string key;
    TRY(s.json_string(key));
    s.space();
    TRY(s.lit(":"));
    s.space();
    if (key == "tool_calls") {
        TRY(json_call_list(s, calls));
    } else if (key == "tool_call") {
        PartialToolCall& call = calls.open();
        TRY(json_call(s, call));
        call.complete = true;
    } else if (key == "response") {
        std::string_view raw;
        TRY(s.json(raw));
        const Json v = Json::parse(raw);
        calls.content(v.is_string() ? v.get<std::string>() : scan::json_text(v));
    } else {
        return Got::No;
    }
    s.space();
    TRY(s.lit("}"));
    s.space();
    return s.at_end() ? s.end() : Got::No;
}

// A marker, then a list of JSON calls, then an optional closing marker (Granite, Command R).
Got marked_list(Scan& s, Calls& calls, std::string_view open, std::string_view fence,
                std::string_view close) {
    for (;;) {
        if (const Got g = next_block(s, calls, open); g != Got::Yes) return no_more(g);
        s.space();
        if (!fence.empty()) {
            if (const Got g = s.lit(fence); g == Got::More) return g;
            s.space();
        }
        TRY(json_call_list(s, calls));
        if (!fence.empty()) {
            s.space();
            if (const Got g = s.lit("```"); g == Got::More) return g;
        }
        if (!close.empty()) TRY(closing(s, close));
    }
}

// <|tool_calls_section_begin|><|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{...}
// <|tool_call_end|>...<|tool_calls_section_end|>
Got kimi(Scan& s, Calls& calls) {
    for (;;) {
        if (const Got g = next_block(s, calls, "<|tool_calls_section_begin|>"); g != Got::Yes) return no_more(g);
        for (bool first = true;; first = false) {
            s.space();
            const size_t at = s.pos();
            const Got g = s.lit("<|tool_call_begin|>");
            if (g == Got::More) return g;
            if (g == Got::No) break;
            if (!first) calls.begin(at);  // the first call's block starts at the section's marker
            PartialToolCall& call = calls.open();
            std::string_view head;
            TRY(s.until("<|tool_call_argument_begin|>", head));
            head = trim_view(head);
            if (head.substr(0, 10) == "functions.") head.remove_prefix(10);
            if (const size_t colon = head.rfind(':'); colon != std::string_view::npos) head = head.substr(0, colon);
            if (head.empty()) return Got::No;
            call.name = std::string(head);
            call.named = true;
            TRY(json_arguments(s, call));
            call.complete = true;
            s.space();
            TRY(s.lit("<|tool_call_end|>"));
        }
        TRY(closing(s, "<|tool_calls_section_end|>"));
    }
}

// How an XML format writes one parameter.
struct XmlParam {
    std::string_view key_open, key_close, value_open, value_close;
    bool newlines;  // a new line after the value's opening and before its closing belongs to the layout
};

// A parameter's value as JSON text: a string parameter's text as it stands; others as JSON when
// they are JSON, else as a string.
std::string param_value(std::string_view text, bool is_string) {
    if (!is_string) {
        const Json v = Json::parse(trim_view(text), nullptr, false);
        if (!v.is_discarded()) return scan::json_text(v);
    }
    return scan::json_text(Json(std::string(text)));
}

// Parameters up to and past `end`: the arguments object, which grows by one parameter at a time.
Got xml_params(Scan& s, Calls& calls, PartialToolCall& call, const XmlParam& p, std::string_view end) {
    const auto& strings = calls.options().string_parameters;
    const auto tool = strings.find(call.name);
    call.arguments = "{";
    for (bool first = true;; first = false) {
        s.space();
        const Got key_open = s.lit(p.key_open);
        if (key_open == Got::More) return key_open;
        if (key_open == Got::No) {
            TRY(s.lit(end));
            call.arguments += "}";
            return Got::Yes;
        }
        std::string_view key, value;
        TRY(s.until(p.key_close, key));
        if (!p.value_open.empty()) {
            s.space();
            TRY(s.lit(p.value_open));
        }
        TRY(s.until(p.value_close, value));
        if (p.newlines && !value.empty() && value.front() == '\n') value.remove_prefix(1);
        if (p.newlines && !value.empty() && value.back() == '\n') value.remove_suffix(1);
        const std::string name(trim_view(key));
        const bool is_string = tool != strings.end() && tool->second.count(name);
        call.arguments += (first ? "" : ",") + scan::json_text(Json(name)) + ":" + param_value(value, is_string);
    }
}

// Qwen3-Coder and Seed-OSS: <open><function=name><parameter=key>value</parameter>...</function><close>
Got function_xml(Scan& s, Calls& calls, std::string_view open, std::string_view close, bool newlines) {
    const XmlParam param{"<parameter=", ">", "", "</parameter>", newlines};
    for (;;) {
        if (const Got g = next_block(s, calls, open); g != Got::Yes) return no_more(g);
        s.space();
        TRY(s.lit("<function="));
        PartialToolCall& call = calls.open();
        TRY(tag_name(s, call, ">"));
        TRY(xml_params(s, calls, call, param, "</function>"));
        call.complete = true;
        TRY(closing(s, close));
    }
}

// GLM 4.5-4.7: <tool_call>name<arg_key>key</arg_key><arg_value>value</arg_value>...</tool_call>
Got glm(Scan& s, Calls& calls) {
    const XmlParam param{"<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", false};
    for (;;) {
        if (const Got g = next_block(s, calls, "<tool_call>"); g != Got::Yes) return no_more(g);
        PartialToolCall& call = calls.open();
        std::string_view name;
        size_t which = 0;
        constexpr std::string_view ends[] = {"\n", "<arg_key>", "</tool_call>"};
        TRY(s.until_any({ends[0], ends[1], ends[2]}, name, which));
        s.back(ends[which].size());  // the parameters (or the end) start at the delimiter
        name = trim_view(name);
        if (name.empty()) return Got::No;
        call.name = std::string(name);
        call.named = true;
        TRY(xml_params(s, calls, call, param, "</tool_call>"));
        call.complete = true;
    }
}

// MiniMax M2: <minimax:tool_call><invoke name="name"><parameter name="key">value</parameter>...</invoke>
// ...</minimax:tool_call>
Got minimax(Scan& s, Calls& calls) {
    const XmlParam param{"<parameter name=\"", "\">", "", "</parameter>", false};
    for (;;) {
        if (const Got g = next_block(s, calls, "<minimax:tool_call>"); g != Got::Yes) return no_more(g);
        for (;;) {
            s.space();
            const Got g = s.lit("<invoke name=\"");
            if (g == Got::More) return g;
            if (g == Got::No) break;
            PartialToolCall& call = calls.open();
            TRY(tag_name(s, call, "\">"));
            TRY(xml_params(s, calls, call, param, "</invoke>"));
            call.complete = true;
        }
        TRY(closing(s, "</minimax:tool_call>"));
    }
}

Got read_calls(Scan& s, Calls& calls, ToolCallFormat format) {
    switch (format) {
        case ToolCallFormat::None:
            break;
        case ToolCallFormat::Generic:
            return generic(s, calls);
        case ToolCallFormat::Hermes:
            return hermes(s, calls);
        case ToolCallFormat::Llama3Json:
            return llama3_json(s, calls);
        case ToolCallFormat::Mistral:
        case ToolCallFormat::MistralArgs:
            return mistral(s, calls);
        case ToolCallFormat::FunctionTag:
            return function_tag(s, calls);
        case ToolCallFormat::DeepSeek:
        case ToolCallFormat::DeepSeekV31:
            return deepseek(s, calls);
        case ToolCallFormat::Granite:
            return marked_list(s, calls, "<|tool_call|>", "", "");
        case ToolCallFormat::CommandR7B:
            return marked_list(s, calls, "<|START_ACTION|>", "", "<|END_ACTION|>");
        case ToolCallFormat::CommandRPlus:
            return marked_list(s, calls, "Action:", "```json", "");
        case ToolCallFormat::Kimi:
            return kimi(s, calls);
        case ToolCallFormat::Qwen3Coder:
            return function_xml(s, calls, "<tool_call>", "</tool_call>", true);
        case ToolCallFormat::SeedOss:
            return function_xml(s, calls, "<seed:tool_call>", "</seed:tool_call>", false);
        case ToolCallFormat::Glm45:
        case ToolCallFormat::Glm47:
            return glm(s, calls);
        case ToolCallFormat::MiniMaxM2:
            return minimax(s, calls);
        case ToolCallFormat::FireFunction:
            return marked_list(s, calls, " functools", "", "");
        case ToolCallFormat::Harmony:  // its own reader (harmony.h), called before this one
            break;
    }
    calls.content(s.text());
    return Got::Yes;
}

#undef TRY

}  // namespace

ParsedOutput parse_tool_calls(std::string_view text, const ParseOptions& options) {
    if (options.tool_format == ToolCallFormat::Harmony) return parse_harmony(text, options);
    ParsedOutput out;
    if (options.tool_format == ToolCallFormat::None) {
        out.content = std::string(text);
        return out;
    }
    Scan s(text, false);
    Calls calls(options, text);
    if (read_calls(s, calls, options.tool_format) == Got::Yes) {
        calls.content(text.substr(s.pos()));
    } else {
        calls.fail();
    }
    for (auto& c : calls.calls())
        if (c.complete) out.tool_calls.push_back({std::move(c.id), std::move(c.name), std::move(c.arguments)});
    out.content = std::string(trim_view(calls.content_text()));
    return out;
}

std::vector<PartialToolCall> scan_tool_calls(std::string_view text, const ParseOptions& options) {
    if (options.tool_format == ToolCallFormat::None) return {};
    if (options.tool_format == ToolCallFormat::Harmony) return scan_harmony_calls(text, options);
    Scan s(text, true);
    Calls calls(options, text);
    if (read_calls(s, calls, options.tool_format) == Got::No) calls.fail();
    return std::move(calls.calls());
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
        case ToolCallFormat::MistralArgs:
            return "mistral-args";
        case ToolCallFormat::FunctionTag:
            return "function-tag";
        case ToolCallFormat::DeepSeek:
            return "deepseek";
        case ToolCallFormat::DeepSeekV31:
            return "deepseek-v3.1";
        case ToolCallFormat::Granite:
            return "granite";
        case ToolCallFormat::CommandR7B:
            return "command-r7b";
        case ToolCallFormat::CommandRPlus:
            return "command-r-plus";
        case ToolCallFormat::Kimi:
            return "kimi-k2";
        case ToolCallFormat::Qwen3Coder:
            return "qwen3-coder";
        case ToolCallFormat::SeedOss:
            return "seed-oss";
        case ToolCallFormat::Glm45:
            return "glm-4.5";
        case ToolCallFormat::Glm47:
            return "glm-4.7";
        case ToolCallFormat::MiniMaxM2:
            return "minimax-m2";
        case ToolCallFormat::FireFunction:
            return "firefunction-v2";
        case ToolCallFormat::Harmony:
            return "gpt-oss";
    }
    return "none";
}

// The markers each family's template writes; more specific ones first (GLM and Qwen3-Coder also
// write <tool_call>, Seed-OSS also <function=).
ToolCallFormat detect_tool_call_format(std::string_view src) {
    auto has = [&](std::string_view needle) { return src.find(needle) != std::string_view::npos; };
    if (has("<|channel|>") && has("<|start|>")) return ToolCallFormat::Harmony;
    if (has("<minimax:tool_call>")) return ToolCallFormat::MiniMaxM2;
    if (has(" functools[")) return ToolCallFormat::FireFunction;
    if (has("<seed:tool_call>")) return ToolCallFormat::SeedOss;
    if (has("<|tool_calls_section_begin|>")) return ToolCallFormat::Kimi;
    if (has("<|START_ACTION|>")) return ToolCallFormat::CommandR7B;
    if (has("Action:") && has("tool_name")) return ToolCallFormat::CommandRPlus;
    if (has("<|tool_call|>")) return ToolCallFormat::Granite;
    if (has("<arg_key>")) return has("<tool_call>{function-name}\\n") || has("<tool_call>{function-name}\n")
                                     ? ToolCallFormat::Glm45
                                     : ToolCallFormat::Glm47;
    if (has("<tool_call>") && has("<function=") && has("<parameter=")) return ToolCallFormat::Qwen3Coder;
    if (has("<tool_call>")) return ToolCallFormat::Hermes;
    if (has("[TOOL_CALLS]")) return has("[ARGS]") ? ToolCallFormat::MistralArgs : ToolCallFormat::Mistral;
    if (has("<｜tool▁call▁begin｜>"))
        return has("function<｜tool▁sep｜>") || has("tool['type'] + '<｜tool▁sep｜>") ||
                       has("tc['type'] + '<｜tool▁sep｜>")
                   ? ToolCallFormat::DeepSeek
                   : ToolCallFormat::DeepSeekV31;
    if (has("<function=")) return ToolCallFormat::FunctionTag;
    if (has("<|start_header_id|>") && has("\"parameters\"")) return ToolCallFormat::Llama3Json;
    if (has("tools") || has("tool_calls")) return ToolCallFormat::Generic;
    return ToolCallFormat::None;
}

ReasoningTags detect_reasoning_tags(std::string_view src) {
    if (src.find("<|START_THINKING|>") != std::string_view::npos) return {"<|START_THINKING|>", "<|END_THINKING|>"};
    return {};
}

}  // namespace engine::chat
