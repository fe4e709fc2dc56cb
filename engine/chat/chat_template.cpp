#include "engine/chat/chat_template.h"

#include <stdexcept>

#include "engine/chat/jinja_json.h"
#include "engine/chat/tool_polyfill.h"

namespace engine::chat {

namespace {

bool has_tools(const Json& tools) {
    return tools.is_array() && !tools.empty();
}

// Tool-call arguments as the template wants them: an object parsed from the JSON string, or a JSON
// string (Python json.dumps spacing) made from the object.
void adapt_arguments(Json& message, bool as_object) {
    const auto calls = message.find("tool_calls");
    if (calls == message.end() || !calls->is_array()) return;
    for (auto& call : *calls) {
        if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
        Json& fn = call["function"];
        if (!fn.contains("arguments")) continue;
        Json& args = fn["arguments"];
        if (as_object && args.is_string()) {
            Json parsed = Json::parse(args.get<std::string>(), nullptr, false);
            if (!parsed.is_discarded() && parsed.is_object()) args = std::move(parsed);
        } else if (!as_object && !args.is_string()) {
            args = jinja::python_json_dumps(jinja::Value::from_json(args));
        }
    }
}

// Whether the template only knows tool results as the calling assistant message's `tool_responses`
// (Gemma 4 interleaved): it reads that list and never tests for a `tool` role.
bool wants_tool_responses(const std::string& source) {
    if (source.find("tool_responses") == std::string::npos) return false;
    for (const char* test : {"== 'tool'", "!= 'tool'", "== \"tool\"", "!= \"tool\""})
        if (source.find(test) != std::string::npos) return false;
    return true;
}

bool has_tool_calls(const Json& m) {
    return m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty();
}

// The tool messages after an assistant message with calls become its `tool_responses` ({name, response:
// the result's JSON when it parses, else its text}), and an assistant reply that follows them (without
// calls of its own) becomes its content: in that format the model answers in the same turn.
Json fold_tool_responses(const Json& messages) {
    Json out = Json::array();
    for (size_t i = 0; i < messages.size(); ++i) {
        Json m = messages[i];
        if (m.value("role", "") != "assistant" || !has_tool_calls(m)) {
            out.push_back(std::move(m));
            continue;
        }
        Json responses = Json::array();
        size_t j = i + 1;
        for (; j < messages.size() && messages[j].value("role", "") == "tool"; ++j) {
            const Json& t = messages[j];
            std::string name = t.contains("name") && t["name"].is_string() ? t["name"].get<std::string>() : "";
            for (const auto& call : m["tool_calls"]) {
                if (!name.empty()) break;
                if (call.is_object() && call.value("id", Json()) == t.value("tool_call_id", Json()) &&
                    call.contains("function") && call["function"].is_object() &&
                    call["function"].value("name", Json()).is_string())
                    name = call["function"]["name"].get<std::string>();
            }
            const std::string text = t["content"].is_string() ? t["content"].get<std::string>() : content_text(t["content"]);
            Json parsed = Json::parse(text, nullptr, false);
            responses.push_back({{"name", name}, {"response", parsed.is_discarded() ? Json(text) : parsed}});
        }
        if (responses.empty()) {
            out.push_back(std::move(m));
            continue;
        }
        m["tool_responses"] = std::move(responses);
        const bool no_text = !m["content"].is_string() || m["content"].get<std::string>().empty();
        if (no_text && j < messages.size() && messages[j].value("role", "") == "assistant" &&
            !has_tool_calls(messages[j])) {
            m["content"] = messages[j]["content"];
            ++j;
        }
        out.push_back(std::move(m));
        i = j - 1;
    }
    return out;
}

}  // namespace

ChatTemplate::ChatTemplate(std::string source, std::string bos_token, std::string eos_token)
    : source_(std::move(source)),
      bos_token_(std::move(bos_token)),
      eos_token_(std::move(eos_token)),
      template_(source_),
      names_developer_role_(source_.find("developer") != std::string::npos),
      wants_tool_responses_(wants_tool_responses(source_)),
      harmony_(source_.find("<|channel|>analysis<|message|>") != std::string::npos) {
    probe_caps();
}

std::string ChatTemplate::render_raw(const Json& messages, const Json& tools, bool add_generation_prompt,
                                     const Json& extra_context, const jinja::RenderOptions& options) const {
    Json ctx = Json::object();
    ctx["messages"] = messages;
    if (has_tools(tools)) ctx["tools"] = tools;
    ctx["add_generation_prompt"] = add_generation_prompt;
    ctx["bos_token"] = bos_token_;
    ctx["eos_token"] = eos_token_;
    if (extra_context.is_object()) {
        for (const auto& [k, v] : extra_context.items()) ctx[k] = v;
    }
    return template_.render(ctx, options);
}

Json ChatTemplate::adapt_messages(const Json& messages) const {
    if (!messages.is_array()) throw std::invalid_argument("messages must be a JSON array");
    Json out = Json::array();
    std::string pending_system;  // system text waiting for the first user turn
    for (const auto& original : messages) {
        if (!original.is_object()) throw std::invalid_argument("each message must be a JSON object");
        Json m = original;
        // Most templates concatenate content as a string: null breaks them, "" does not.
        if (!m.contains("content") || m["content"].is_null()) {
            m["content"] = "";
        } else if (m["content"].is_array() && !caps_.supports_typed_content) {
            m["content"] = content_text(m["content"]);
        }
        adapt_arguments(m, caps_.object_arguments);
        if (caps_.null_content_with_tool_calls && m.contains("tool_calls") && m["content"] == "")
            m["content"] = nullptr;
        // OpenAI's developer messages are system messages (o-series clients and agents send them so);
        // only a template that names the role itself (gpt-oss, Gemma 4) gets it as written. Others drop
        // it, replace it with their default system prompt, or refuse the conversation.
        if (!names_developer_role_ && m.value("role", "") == "developer")
            m["role"] = "system";
        // The reasoning of an earlier assistant turn, also under the name the templates that render it
        // read (gpt-oss's analysis channel, LFM2.5's <think>): `thinking`.
        if (m.contains("reasoning_content") && m["reasoning_content"].is_string() &&
            !m["reasoning_content"].get<std::string>().empty() && !m.contains("thinking"))
            m["thinking"] = m["reasoning_content"];
        // gpt-oss's template writes a last assistant turn's analysis message whenever `thinking` is there,
        // and llama-server 0.7.0 always gives it (empty without reasoning): a continued turn's prompt is
        // then the same, an empty analysis message before the final one.
        if (harmony_ && m.value("role", "") == "assistant" && !m.contains("thinking")) m["thinking"] = "";
        const std::string role = m.value("role", "");
        if (!caps_.supports_system_role && role == "system") {
            if (!pending_system.empty()) pending_system += "\n\n";
            pending_system += content_text(m["content"]);
            continue;
        }
        if (!pending_system.empty() && role == "user") {
            m["content"] = pending_system + "\n\n" + content_text(m["content"]);
            pending_system.clear();
        }
        out.push_back(std::move(m));
    }
    if (!pending_system.empty()) out.push_back(Json{{"role", "user"}, {"content", pending_system}});
    return wants_tool_responses_ ? fold_tool_responses(out) : out;
}

std::string ChatTemplate::apply(const ChatInputs& inputs) const {
    jinja::RenderOptions options;
    options.now = inputs.now;
    const Json messages = apply_tool_polyfills(inputs.messages, inputs.tools, polyfill_needs(caps_));
    return render_raw(adapt_messages(messages), inputs.tools, inputs.add_generation_prompt,
                      inputs.extra_context, options);
}

std::string render(const std::string& template_source, const Json& messages, const Json& tools,
                   bool add_generation_prompt, const std::string& bos_token, const std::string& eos_token,
                   const Json& extra_context) {
    ChatInputs inputs;
    inputs.messages = messages;
    inputs.tools = tools;
    inputs.add_generation_prompt = add_generation_prompt;
    inputs.extra_context = extra_context;
    return ChatTemplate(template_source, bos_token, eos_token).apply(inputs);
}

}  // namespace engine::chat
