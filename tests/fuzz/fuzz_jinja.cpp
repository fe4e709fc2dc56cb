// libFuzzer target: a chat template (hostile source: it comes from a model file or --chat-template-file)
// rendered with a hostile context (the messages, tools and kwargs of a request). The template is parsed,
// rendered directly with the context, then used as a ChatTemplate (capability probes, message adaptation,
// tool polyfills) on the context's conversation; the built-in format and tool-call format detections read
// the source too. Errors must be TemplateError or std::invalid_argument (both 400s in the server).
// Input: template source, optionally followed by a NUL byte and a JSON object as the context.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/chat/builtin_formats.h"
#include "engine/chat/chat_parser.h"
#include "engine/chat/chat_template.h"
#include "engine/chat/jinja_template.h"

namespace {

using engine::chat::Json;

const Json& default_context() {
    static const Json ctx = Json::parse(R"({
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi <b>there</b>"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "42"},
            {"role": "user", "content": [{"type": "text", "text": "and?"}]}
        ],
        "tools": [{"type": "function", "function": {"name": "f", "description": "d",
                   "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}}],
        "enable_thinking": true
    })");
    return ctx;
}

// The depth the server allows in a request body (server/http/json_depth.h): deeper is refused before parsing.
bool too_deep(std::string_view text) {
    size_t depth = 0;
    for (char c : text) {
        if (c == '[' || c == '{') {
            if (++depth > 256) return true;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return false;
}

template <class F>
void expect_clean(F&& f) {
    try {
        f();
    } catch (const engine::jinja::TemplateError&) {
    } catch (const std::invalid_argument&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const size_t nul = input.find('\0');
    const std::string source(input.substr(0, nul));
    Json ctx = default_context();
    if (nul != std::string_view::npos) {
        const std::string_view rest = input.substr(nul + 1);
        if (too_deep(rest)) return 0;
        Json parsed = Json::parse(rest, nullptr, false);
        if (parsed.is_discarded() || !parsed.is_object()) return 0;
        ctx = std::move(parsed);
    }
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));

    (void)engine::chat::detect_builtin_format(source);
    (void)engine::chat::detect_tool_call_format(source);

    std::unique_ptr<engine::jinja::Template> t;
    try {
        t = std::make_unique<engine::jinja::Template>(source);
    } catch (const engine::jinja::TemplateError&) {
        return 0;
    }
    engine::jinja::RenderOptions options;
    options.now = now;
    Json direct = ctx;
    direct["bos_token"] = "<s>";
    direct["eos_token"] = "</s>";
    direct["add_generation_prompt"] = true;
    expect_clean([&] { (void)t->render(direct, options); });

    expect_clean([&] {
        engine::chat::ChatTemplate chat(source, "<s>", "</s>");
        engine::chat::ChatInputs inputs;
        if (ctx.contains("messages")) inputs.messages = ctx["messages"];
        if (ctx.contains("tools")) inputs.tools = ctx["tools"];
        inputs.extra_context = ctx;
        inputs.now = now;
        (void)chat.apply(inputs);
        const std::string builtin = engine::chat::detect_builtin_format(source);
        if (builtin != engine::chat::kJinjaOnly)
            (void)engine::chat::format_builtin(builtin, inputs.messages, true);
    });
    return 0;
}
