// Which built-in format a Jinja template implements, recognised by the special tokens and
// idioms it contains (the same markers llama.cpp keys on). Rules are tried in order; the first
// match wins, so more specific markers come before the generic ones they contain.
#include "engine/chat/builtin_formats.h"

namespace engine::chat {

namespace {

class Text {
  public:
    explicit Text(std::string_view t) : t_(t) {}
    bool has(std::string_view needle) const { return t_.find(needle) != std::string_view::npos; }
    bool starts(std::string_view prefix) const { return t_.substr(0, prefix.size()) == prefix; }

  private:
    std::string_view t_;
};

// ChatML-style <|im_start|> templates: Phi-4 adds <|im_sep|>; SmolVLM only borrows the token.
std::string im_start_family(const Text& t) {
    if (t.has("<|im_sep|>")) return "phi4";
    if (t.has("<end_of_utterance>")) return "smolvlm";
    return "chatml";
}

// [INST] templates: Mistral's official v1/v3/v7 variants, else Llama 2 and its variants.
std::string inst_family(const Text& t) {
    if (t.has("[SYSTEM_PROMPT]")) return "mistral-v7";
    if (t.has("' [INST] ' + system_message") || t.has("[AVAILABLE_TOOLS]")) {
        if (t.has(" [INST]")) return "mistral-v1";
        if (t.has("\"[INST]\"")) return "mistral-v3-tekken";
        return "mistral-v3";
    }
    if (t.has("content.strip()")) return "llama2-sys-strip";
    if (t.has("bos_token + '[INST]")) return "llama2-sys-bos";
    if (t.has("<<SYS>>")) return "llama2-sys";
    return "llama2";
}

// Granite <|start_of_role|> templates: those that describe tools are Granite 4, and of those only
// 4.0 defines g4_default_system_message.
std::string granite_family(const Text& t) {
    if (!t.has("<tool_call>") && !t.has("<tools>")) return "granite";
    return t.has("g4_default_system_message") ? "granite-4.0" : "granite-4.1";
}

}  // namespace

std::string detect_builtin_format(std::string_view template_text) {
    if (template_text.empty()) return "chatml";
    if (is_builtin_format(template_text)) return std::string(template_text);
    const Text t(template_text);
    if (t.has("<|im_start|>")) return im_start_family(t);
    if (t.starts("mistral") || t.has("[INST]")) return inst_family(t);
    if (t.has("<|assistant|>") && t.has("<|end|>")) return "phi3";
    if (t.has("[gMASK]<sop>")) return "chatglm4";
    if (t.has("<|assistant|>") && t.has("<|user|>")) return t.has("</s>") ? "falcon3" : "glmedge";
    if (t.has("<|{{ item['role'] }}|>") && t.has("<|begin_of_image|>")) return "glmedge";
    if (t.has("<|user|>") && t.has("<|endoftext|>")) return "zephyr";
    if (t.has("bos_token + message['role']")) return "monarch";
    if (t.has("<start_of_turn>")) return "gemma";
    if (t.has("'\\n\\nAssistant: ' + eos_token")) return "orion";
    if (t.has("GPT4 Correct ")) return "openchat";
    if (t.has("USER: ") && t.has("ASSISTANT: ")) return t.has("SYSTEM: ") ? "vicuna-orca" : "vicuna";
    if (t.has("### Instruction:") && t.has("<|EOT|>")) return "deepseek";
    if (t.has("<|START_OF_TURN_TOKEN|>") && t.has("<|USER_TOKEN|>")) return "command-r";
    if (t.has("<|start_header_id|>") && t.has("<|end_header_id|>")) return "llama3";
    if (t.has("[gMASK]sop")) return "chatglm3";
    if (t.has("<用户>")) return "minicpm";
    if (t.has("'Assistant: ' + message['content'] + eos_token")) return "deepseek2";
    if (t.has("<｜Assistant｜>") && t.has("<｜User｜>") && t.has("<｜end▁of▁sentence｜>")) return "deepseek3";
    if (t.has("[|system|]") && t.has("[|assistant|]") && t.has("[|endofturn|]")) {
        return t.has("[|tool|]") ? "exaone4" : "exaone3";
    }
    if (t.has("rwkv-world") || t.has("{{- 'User: ' + message['content']|trim + '\\n\\n' -}}"))
        return "rwkv-world";
    if (t.has("<|start_of_role|>")) return granite_family(t);
    if (t.has("message['role'] + additional_special_tokens[0] + message['content'] + "
              "additional_special_tokens[1]")) {
        return "gigachat";
    }
    if (t.has("<|role_start|>")) return "megrez";
    if (t.has(" Ассистент:")) return "yandex";
    if (t.has("<role>ASSISTANT</role>")) {
        if (t.has("'HUMAN'")) return "bailing";
        if (t.has("\"HUMAN\"") && t.has("<think>")) return "bailing-think";
        if (t.has("<role>HUMAN</role>") && t.has("<|role_end|>")) return "bailing2";
    }
    if (t.has("<|header_start|>") && t.has("<|header_end|>")) return "llama4";
    if (t.has("<|endofuserprompt|>")) return "dots1";
    if (t.has("<|startoftext|>") && t.has("<|extra_4|>")) return "hunyuan-moe";
    if (t.has("<|start|>") && t.has("<|channel|>")) return "gpt-oss";
    if (t.has("<｜hy_begin▁of▁sentence｜>") && t.has("<｜hy_Assistant｜>")) return "hunyuan-vl";
    if (t.has("<｜hy_Assistant｜>") && t.has("<｜hy_place▁holder▁no▁3｜>")) return "hunyuan-dense";
    if (t.has("<|im_assistant|>assistant<|im_middle|>")) return "kimi-k2";
    if (t.has("<seed:bos>")) return "seed_oss";
    if (t.has("'Assistant: '  + message['content'] + '<|separator|>")) return "grok-2";
    if (t.has("[unused9]系统：[unused10]")) return "pangu-embedded";
    if (t.has("<|begin|>") && t.has("<|content|>") && t.has("<|end|>")) return "solar-open";
    return kJinjaOnly;
}

}  // namespace engine::chat
