#include "server/api/chat_formatter.h"

#include <ctime>
#include <stdexcept>

#include "engine/chat/builtin_formats.h"
#include "engine/chat/text_scan.h"
#include "engine/chat/tool_polyfill.h"
#include "engine/tokenizer/vocab.h"

namespace api {

namespace {

// The current time in a strftime format, local or UTC (the dates templates print).
std::string now_as(const char* format, bool utc) {
    const std::time_t now = std::time(nullptr);
    std::tm t{};
    if (utc) gmtime_r(&now, &t);
    else localtime_r(&now, &t);
    char out[64];
    std::strftime(out, sizeof out, format, &t);
    return out;
}

}  // namespace

ChatFormatter::ChatFormatter(const engine::Model& model, const std::string& chat_template, bool jinja) {
    const auto& vocab = model.vocab();
    const std::string bos = vocab.bos() >= 0 ? vocab.token_to_piece(vocab.bos(), true) : "";
    const std::string eos = vocab.eos() >= 0 ? vocab.token_to_piece(vocab.eos(), true) : "";
    if (!chat_template.empty() && engine::chat::is_builtin_format(chat_template)) {
        name_ = chat_template;
        return;
    }
    source_ = chat_template.empty() ? model.chat_template() : chat_template;
    if (!chat_template.empty() && !jinja && chat_template.find("{%") == std::string::npos &&
        chat_template.find("{{") == std::string::npos)
        throw std::invalid_argument("unknown chat template '" + chat_template +
                                    "' (a built-in name such as chatml, llama3, mistral-v7, or Jinja template text)");
    if (source_.empty()) {
        name_ = "chatml";
        return;
    }
    if (!jinja) {
        const std::string detected = engine::chat::detect_builtin_format(source_);
        if (detected != engine::chat::kJinjaOnly) {
            name_ = detected;
            return;
        }
    }
    name_ = "jinja";
    jinja_ = std::make_unique<engine::chat::ChatTemplate>(source_, bos, eos);
    wants_date_string_ = source_.find("date_string") != std::string::npos;
    firefunction_ = source_.find(" functools[") != std::string::npos;
    reasoning_tags_ = engine::chat::detect_reasoning_tags(source_);
    // A template that cannot render tools gets the polyfill, which teaches the generic JSON syntax.
    tool_format_ = jinja_->caps().supports_tools ? engine::chat::detect_tool_call_format(source_)
                                                 : engine::chat::ToolCallFormat::Generic;
    if (tool_format_ == engine::chat::ToolCallFormat::None) tool_format_ = engine::chat::ToolCallFormat::Generic;
    // Firefunction v2 reads its tools from `functions`, so the probe finds no tool support: its syntax all the same.
    if (firefunction_) tool_format_ = engine::chat::ToolCallFormat::FireFunction;
}

std::string ChatFormatter::apply(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                 bool add_generation_prompt, const nlohmann::ordered_json& extra_context) const {
    if (jinja_) {
        engine::chat::ChatInputs in;
        in.messages = messages;
        in.tools = tools;
        in.add_generation_prompt = add_generation_prompt;
        in.extra_context = extra_context;
        // Llama 3.1/3.3 print `date_string` as "Today Date" (their own default is 26 Jul 2024): as
        // llama-server, today's date unless the request gives one.
        if (wants_date_string_ && in.extra_context.is_object() &&
            !in.extra_context.contains("date_string")) {
            in.extra_context["date_string"] = now_as("%d %b %Y", false);
        }
        // Firefunction v2 prints `functions` (the tools as indented JSON, "" without any) and `datetime` in
        // its system prompt and reads no `tools`. Without them the template fails on an undefined
        // `functions`. As llama-server gives them: the date as 0.7.0 writes it; the tools as b4748 wrote them
        // (0.7.0 leaves `functions` empty, so the model never sees the tools it is offered).
        if (firefunction_ && in.extra_context.is_object()) {
            if (!in.extra_context.contains("functions"))
                in.extra_context["functions"] = tools.is_array() && !tools.empty() ? tools.dump(2) : "";
            if (!in.extra_context.contains("datetime")) in.extra_context["datetime"] = now_as("%b %d %Y", true);
            in.tools = nullptr;
        }
        return jinja_->apply(in);
    }
    // Built-in formats render role and text only: tools, calls and results all go in as text.
    const engine::chat::PolyfillNeeds all{true, true, true};
    return engine::chat::format_builtin(name_, engine::chat::apply_tool_polyfills(messages, tools, all),
                                        add_generation_prompt);
}

std::string ChatFormatter::apply_continuing(const nlohmann::ordered_json& messages,
                                            const nlohmann::ordered_json& tools, const std::string& prefill,
                                            const nlohmann::ordered_json& extra_context,
                                            const nlohmann::ordered_json& turn) const {
    nlohmann::ordered_json with = messages;
    nlohmann::ordered_json last = turn.is_object() ? turn : nlohmann::ordered_json{{"role", "assistant"}};
    last["content"] = prefill;
    with.push_back(std::move(last));
    try {
        // The final turn starts where the conversation without it ends (when that is a prefix), so a short
        // prefill is not found in the turn's closing text instead.
        const std::string before = apply(messages, tools, false, extra_context);
        const std::string rendered = apply(with, tools, false, extra_context);
        const size_t turn = rendered.starts_with(before) ? before.size() : 0;
        for (const std::string& text : {prefill, std::string(engine::chat::trim_view(prefill))}) {
            if (text.empty()) continue;
            const size_t at = rendered.rfind(text);
            if (at != std::string::npos && at >= turn) return rendered.substr(0, at + text.size());
        }
    } catch (const std::exception&) {
        // A template that refuses a final assistant turn: the fallback below.
    }
    return apply(messages, tools, true, extra_context) + prefill;
}

}  // namespace api
