// Chat templates: turn an OpenAI-style conversation (messages, tools) into the prompt text a model
// was trained on, by rendering the model's Jinja template (tokenizer.chat_template) the way HF
// transformers does. ChatTemplate parses once and probes what the template supports, so requests
// can be adapted to it (system role merged into the first user turn, tool-call arguments passed as
// objects or as JSON strings, content parts flattened to text).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "engine/chat/jinja_template.h"

namespace engine::chat {

using Json = nlohmann::ordered_json;

struct ChatMessage {
    std::string role;
    Json content;     // a string, an array of content parts ({"type": "text", "text": ...}), or null
    Json tool_calls;  // OpenAI tool calls (array) or null
    std::string tool_call_id;
    std::string name;
    std::string reasoning_content;

    // Fields that are empty/null are left out, as an OpenAI client would.
    Json to_json() const;
    // Throws std::invalid_argument when `j` is not a message object with a string role.
    static ChatMessage from_json(const Json& j);
};

Json messages_to_json(const std::vector<ChatMessage>& messages);

// What a template can render, found by rendering probe conversations at construction.
struct TemplateCaps {
    bool supports_system_role = true;
    bool supports_tools = false;                // renders tool definitions
    bool supports_tool_calls = false;           // renders an assistant's tool calls
    bool supports_tool_responses = false;       // renders tool messages (results)
    bool object_arguments = true;               // wants tool-call arguments as objects, not JSON strings
    bool null_content_with_tool_calls = false;  // renders tool calls only when the content is null
    bool supports_typed_content = false;        // renders content-part arrays itself
    bool supports_string_content = true;        // renders a plain string message's text
    bool supports_parallel_tool_calls = false;  // renders every call of an assistant turn with several
    bool supports_preserve_reasoning = false;   // renders an earlier assistant turn's reasoning_content
    bool supports_reasoning_effort = false;     // reads the reasoning_effort variable
};

struct ChatInputs {
    Json messages = Json::array();
    Json tools;  // null or [] for none: `tools` is then left undefined, as llama.cpp does
    bool add_generation_prompt = true;
    Json extra_context = Json::object();  // extra template variables, e.g. enable_thinking
    std::optional<std::chrono::system_clock::time_point> now;  // for strftime_now()
};

class ChatTemplate {
  public:
    // Throws jinja::TemplateError when the source does not parse.
    ChatTemplate(std::string source, std::string bos_token, std::string eos_token);

    // Adapts the messages to the template's capabilities, then renders. Throws
    // jinja::TemplateError (e.g. Kind::Raised for the template's own raise_exception).
    std::string apply(const ChatInputs& inputs) const;

    const TemplateCaps& caps() const { return caps_; }
    const std::string& source() const { return source_; }

  private:
    // Renders exactly what it is given, with the standard variables.
    std::string render_raw(const Json& messages, const Json& tools, bool add_generation_prompt,
                           const Json& extra_context, const jinja::RenderOptions& options) const;
    Json adapt_messages(const Json& messages) const;
    void probe_caps();

    std::string source_;
    std::string bos_token_;
    std::string eos_token_;
    jinja::Template template_;
    TemplateCaps caps_;
    // Read from the source once: whether it names the developer role itself, whether it knows tool
    // results only as the calling message's `tool_responses` (Gemma 4 interleaved), and whether it writes
    // Harmony's analysis channel (gpt-oss).
    bool names_developer_role_ = false;
    bool wants_tool_responses_ = false;
    bool harmony_ = false;
};

// One-shot rendering with the adaptations of ChatTemplate::apply.
std::string render(const std::string& template_source, const Json& messages, const Json& tools,
                   bool add_generation_prompt, const std::string& bos_token, const std::string& eos_token,
                   const Json& extra_context = Json::object());

// The text of a message's content: the string itself, or the text parts of a parts array joined.
std::string content_text(const Json& content);

}  // namespace engine::chat
