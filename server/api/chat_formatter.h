// Turns chat messages into the prompt text: a built-in format (--chat-template NAME, or detected from
// the model's template), or the model's Jinja template (--jinja, or when no built-in format matches).
#pragma once

#include <memory>
#include <string>

#include "engine/chat/chat_parser.h"
#include "engine/chat/chat_template.h"
#include "engine/model/model.h"

namespace api {

class ChatFormatter {
public:
    // Throws std::invalid_argument for an unusable --chat-template value.
    ChatFormatter(const engine::Model& model, const std::string& chat_template, bool jinja);
    // messages: OpenAI messages array; tools: array or null. Throws std::invalid_argument / template errors.
    // extra_context: more template variables (chat_template_kwargs, e.g. enable_thinking).
    std::string apply(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                      bool add_generation_prompt,
                      const nlohmann::ordered_json& extra_context = nlohmann::ordered_json::object()) const;
    // The prompt that continues a final assistant message whose text is `prefill` (an assistant prefill;
    // messages without it), as Hugging Face's continue_final_message: rendered with it as the final
    // assistant turn and no generation prompt, cut right after its text, so the template's own framing
    // of that turn stays (Qwen3's closed think block, for one). Where the rendered turn does not show the
    // text (as given or trimmed), the generation prompt followed by the text. `turn`: the assistant message
    // being continued, when there is one (its other fields, such as reasoning_content, are rendered too).
    std::string apply_continuing(
        const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
        const std::string& prefill,
        const nlohmann::ordered_json& extra_context = nlohmann::ordered_json::object(),
        const nlohmann::ordered_json& turn = nullptr) const;
    // The tool-call syntax the template teaches (Generic for built-in formats, which get the
    // polyfill's generic JSON instructions).
    engine::chat::ToolCallFormat tool_format() const { return tool_format_; }
    // gpt-oss's Harmony format (its Jinja template, or the built-in gpt-oss format): replies are read by
    // channel (engine/chat/harmony.h).
    bool harmony() const {
        return name_ == "gpt-oss" || tool_format_ == engine::chat::ToolCallFormat::Harmony;
    }
    // The tags around the model's reasoning (<think> unless the template teaches others).
    const engine::chat::ReasoningTags& reasoning_tags() const { return reasoning_tags_; }
    // "chatml", "llama3", ... or "jinja".
    const std::string& name() const { return name_; }
    const std::string& template_source() const { return source_; }
    // What the Jinja template renders (probed); nullptr for a built-in format.
    const engine::chat::TemplateCaps* caps() const { return jinja_ ? &jinja_->caps() : nullptr; }

private:
    std::string name_;
    std::string source_;
    engine::chat::ToolCallFormat tool_format_ = engine::chat::ToolCallFormat::Generic;
    engine::chat::ReasoningTags reasoning_tags_;
    std::unique_ptr<engine::chat::ChatTemplate> jinja_;
    bool wants_date_string_ = false;  // the template prints `date_string` (Llama 3.1/3.3)
    bool firefunction_ = false;       // Firefunction v2: `functions` and `datetime` instead of `tools`
};

}  // namespace api
