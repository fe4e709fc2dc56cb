#include "server/api/chat_formatter.h"

#include <stdexcept>

#include "engine/chat/builtin_formats.h"
#include "engine/tokenizer/vocab.h"

namespace api {

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
}

std::string ChatFormatter::apply(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                 bool add_generation_prompt) const {
    if (jinja_) {
        engine::chat::ChatInputs in;
        in.messages = messages;
        in.tools = tools;
        in.add_generation_prompt = add_generation_prompt;
        return jinja_->apply(in);
    }
    return engine::chat::format_builtin(name_, messages, add_generation_prompt);
}

}  // namespace api
