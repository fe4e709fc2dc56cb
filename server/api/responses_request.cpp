#include "server/api/responses_request.h"

#include <map>
#include <optional>
#include <string>

#include "server/api/json_fields.h"

namespace api {

namespace {

using ojson = nlohmann::ordered_json;

[[noreturn]] void unsupported_part(const std::string& at, const std::string& type) {
    if (type == "input_image")
        bad_request("'" + at + "': input_image is not supported: this server's model reads text only");
    if (type == "input_file" || type == "input_audio")
        bad_request("'" + at + "': " + type + " is not supported: this server reads text only");
    bad_request("'" + at + "': content parts of type '" + type + "' are not supported");
}

// A message's content (a string or text parts) as one string; parts are joined with "\n".
std::string content_text(const ojson& content, const std::string& at) {
    if (content.is_string()) return content.get<std::string>();
    std::string out;
    for (size_t k = 0; k < content.size(); ++k) {
        const ojson& part = content[k];
        const std::string pat = at + "[" + std::to_string(k) + "]";
        const std::string type = string_or_empty(part, "type");
        std::string text;
        if (type == "input_text" || type == "output_text") {
            text = string_or_empty(part, "text");
        } else if (type == "refusal") {
            text = string_or_empty(part, "refusal");
        } else {
            unsupported_part(pat, type);
        }
        if (k) out += "\n";
        out += text;
    }
    return out;
}

// The chat messages, built item by item. The instructions and every system or developer item are
// system messages of their own, where they stand (llama-server's prompt; templates that take one system
// message only say so).
class Conversation {
  public:
    explicit Conversation(std::string instructions) {
        if (!instructions.empty()) push({{"role", "system"}, {"content", std::move(instructions)}});
    }

    void message(const std::string& role, std::string text) {
        if (role == "system" || role == "developer") {
            push({{"role", "system"}, {"content", std::move(text)}});
        } else if (role == "assistant") {
            push({{"role", "assistant"}, {"content", std::move(text)}});
            open_assistant_ = true;
        } else {
            push({{"role", role}, {"content", std::move(text)}});
        }
    }

    void function_call(const std::string& call_id, const std::string& name, const std::string& arguments) {
        if (!open_assistant_) {
            push({{"role", "assistant"}, {"content", ""}});
            open_assistant_ = true;
        }
        ojson& m = messages_.back();
        if (!m.contains("tool_calls")) m["tool_calls"] = ojson::array();
        m["tool_calls"].push_back({{"id", call_id},
                                   {"type", "function"},
                                   {"function", {{"name", name}, {"arguments", arguments}}}});
        call_names_[call_id] = name;
    }

    void function_output(const std::string& call_id, std::string text, const std::string& at) {
        const auto it = call_names_.find(call_id);
        if (it == call_names_.end())
            bad_request("'" + at + "': call_id '" + call_id + "' does not answer any earlier function_call");
        push({{"role", "tool"}, {"tool_call_id", call_id}, {"name", it->second}, {"content", std::move(text)}});
    }

    // Reasoning items join the assistant message after them. One with no reply after it (a turn
    // interrupted after its reasoning) is dropped: the template would not show a past turn's reasoning
    // without its reply either (llama-server accepts it).
    void reasoning(std::string text) {
        if (reasoning_) *reasoning_ += "\n" + text;
        else reasoning_ = std::move(text);
    }

    ojson finish() {
        if (messages_.empty()) bad_request("'input' is empty: there is nothing to respond to");
        return std::move(messages_);
    }

  private:
    void push(ojson m) {
        if (reasoning_ && m["role"] == "assistant") m["reasoning_content"] = *reasoning_;
        reasoning_.reset();
        open_assistant_ = false;
        messages_.push_back(std::move(m));
    }

    ojson messages_ = ojson::array();
    bool open_assistant_ = false;  // function_call items join the assistant message before them
    std::map<std::string, std::string> call_names_;
    std::optional<std::string> reasoning_;  // reasoning items since the last message
};

ojson restate_input(const ojson& body) {
    Conversation conv(string_or_empty(body, "instructions"));
    const ojson* input = present(body, "input");
    if (!input) bad_request("'input' is required");
    if (input->is_string()) {
        conv.message("user", input->get<std::string>());
        return conv.finish();
    }
    for (size_t i = 0; i < input->size(); ++i) {
        const ojson& item = (*input)[i];
        const std::string at = "input[" + std::to_string(i) + "]";
        const std::string type = item.contains("type") ? string_or_empty(item, "type") : std::string("message");
        if (type == "message") {
            const std::string role = string_or_empty(item, "role");
            conv.message(role, content_text(item["content"], at + ".content"));
        } else if (type == "function_call") {
            conv.function_call(string_or_empty(item, "call_id"), string_or_empty(item, "name"),
                              string_or_empty(item, "arguments"));
        } else if (type == "function_call_output") {
            const ojson& out = item["output"];
            conv.function_output(string_or_empty(item, "call_id"), content_text(out, at + ".output"), at);
        } else if (type == "reasoning") {
            // encrypted_content (opaque to this server, "" in llama-server's own items) is ignored: the
            // reasoning's text comes from its content or summary.
            std::string text;
            const ojson* parts = present(item, "content");
            if (!parts || parts->empty()) parts = present(item, "summary");
            if (parts)
                for (size_t k = 0; k < parts->size(); ++k) text += (k ? "\n" : "") + string_or_empty((*parts)[k], "text");
            conv.reasoning(std::move(text));
        } else if (type == "item_reference") {
            bad_request("'" + at + "': item references are not supported: this server keeps no responses");
        } else {
            bad_request(
                "'" + at + "': input items of type '" + type +
                "' are not supported (message, function_call, function_call_output and reasoning are)");
        }
    }
    return conv.finish();
}

// Function tools as chat tools: name, description ("" when absent) and parameters, as llama-server
// restates them. Tools of other types (Codex's custom, local_shell, web_search ...) are left out, as
// llama-server leaves them out: the model is not offered them, and the rest of the request is served.
ojson restate_tools(const ojson& tools) {
    ojson out = ojson::array();
    for (const ojson& t : tools) {
        if (string_or_empty(t, "type") != "function") continue;
        ojson fn = ojson::object();
        fn["name"] = t["name"];
        fn["description"] = present(t, "description") ? t["description"] : ojson("");
        if (const ojson* p = present(t, "parameters")) fn["parameters"] = *p;
        out.push_back({{"type", "function"}, {"function", fn}});
    }
    return out;
}

ojson restate_tool_choice(const ojson& choice) {
    if (choice.is_string()) return choice;
    const std::string type = string_or_empty(choice, "type");
    if (type == "function") return {{"type", "function"}, {"function", {{"name", choice["name"]}}}};
    bad_request(
        "'tool_choice' of type '" + type +
        "' is not supported (\"auto\", \"none\", \"required\" or {\"type\": \"function\", \"name\": ...})");
}

// text.format -> response_format; nothing for "text".
void restate_text_format(const ojson& text, ojson& chat) {
    // text.verbosity is a hint to OpenAI's models; the reply is as long as this model makes it.
    const ojson* format = present(text, "format");
    if (!format) return;
    const std::string type = string_or_empty(*format, "type");
    if (type == "json_object") {
        chat["response_format"] = {{"type", "json_object"}};
    } else if (type == "json_schema") {
        ojson js = ojson::object();
        for (const char* key : {"name", "description", "schema", "strict"})
            if (const ojson* v = present(*format, key)) js[key] = *v;
        chat["response_format"] = {{"type", "json_schema"}, {"json_schema", js}};
    }
}

// Fields the server cannot honor: a 400 naming each, never ignored.
void refuse_unsupported(const ojson& body) {
    const auto set = [&](const char* key) { return present(body, key) != nullptr; };
    if (set("previous_response_id"))
        bad_request(
            "'previous_response_id' is not supported: this server keeps no responses; send the whole "
            "conversation in 'input'");
    if (set("conversation"))
        bad_request(
            "'conversation' is not supported: this server keeps no conversations; send the whole "
            "conversation in 'input'");
    // store: true is accepted and nothing is stored (as llama-server does; the echo says store: false),
    // so a later previous_response_id is refused, above.
    if (const ojson* b = present(body, "background"); b && *b == true)
        bad_request(
            "'background': true is not supported: background responses need stored responses, which "
            "this server does not keep");
    // Codex asks for its reasoning back encrypted; this server keeps no state to encrypt: reasoning items
    // come back whole, as their content (llama-server accepts it too).
    if (const ojson* inc = present(body, "include"))
        for (const auto& v : *inc)
            if (v != "reasoning.encrypted_content")
                bad_request("'include': " + v.dump() + " is not supported: this server adds nothing to the output");
    if (set("prompt")) bad_request("'prompt' is not supported: this server keeps no prompt templates");
    if (const ojson* t = present(body, "truncation"); t && *t != "disabled")
        bad_request("'truncation': only \"disabled\" is supported");
    if (const ojson* t = present(body, "service_tier"); t && *t != "auto" && *t != "default")
        bad_request("'service_tier': only \"auto\" and \"default\" are supported (this server has one tier)");
    if (set("max_tool_calls"))
        bad_request(
            "'max_tool_calls' is not supported; 'parallel_tool_calls': false limits a reply to one call");
    if (const ojson* t = present(body, "top_logprobs"); t && *t != 0)
        bad_request(
            "'top_logprobs' is not supported by /v1/responses (use /v1/chat/completions with logprobs)");
    // context_management (server-side compaction) is not done: the whole input is used, as llama-server does.
    if (const ojson* r = present(body, "prompt_cache_retention"); r && *r != "in-memory")
        bad_request("'prompt_cache_retention': only \"in-memory\" is supported (the KV cache of the slots)");
    if (const ojson* so = present(body, "stream_options"))
        if (const ojson* ob = present(*so, "include_obfuscation"); ob && *ob == true)
            bad_request("'stream_options.include_obfuscation': true is not supported");
    // reasoning.summary / generate_summary (Codex sends them): no summary is written; the model's
    // reasoning comes whole, as the content (reasoning_text) of reasoning items.
}

}  // namespace

RestatedResponses restate_responses_request(const ojson& body) {
    refuse_unsupported(body);
    RestatedResponses out;
    ojson& chat = out.chat.body;
    chat["messages"] = restate_input(body);

    const ojson* tools = present(body, "tools");
    if (tools && !tools->empty()) {
        ojson function_tools = restate_tools(*tools);
        if (!function_tools.empty()) chat["tools"] = std::move(function_tools);
    }
    if (const ojson* choice = present(body, "tool_choice")) chat["tool_choice"] = restate_tool_choice(*choice);
    if (const ojson* m = present(body, "max_output_tokens")) chat["max_tokens"] = *m;
    if (const ojson* text = present(body, "text")) {
        restate_text_format(*text, chat);
        if (chat.contains("response_format") && chat.contains("tools") &&
            chat.value("tool_choice", ojson("auto")) != "none")
            bad_request("'text.format' " + chat["response_format"]["type"].dump() +
                        " cannot be combined with 'tools' on this server (unless tool_choice is \"none\")");
    }
    std::string effort;
    if (const ojson* r = present(body, "reasoning"))
        if (const ojson* e = present(*r, "effort")) {
            effort = e->get<std::string>();
            apply_reasoning_effort(chat, effort, "reasoning.effort");
        }
    copy_extension_fields(body,
                          {"model",
                           "input",
                           "instructions",
                           "tools",
                           "tool_choice",
                           "max_output_tokens",
                           "text",
                           "reasoning",
                           "metadata",
                           "user",
                           "store",
                           "background",
                           "include",
                           "truncation",
                           "service_tier",
                           "prompt_cache_key",
                           "prompt_cache_retention",
                           "safety_identifier",
                           "stream_options",
                           "top_logprobs",
                           "previous_response_id",
                           "conversation",
                           "prompt",
                           "max_tool_calls",
                           "context_management"},
                          "responses", chat);

    ojson& echo = out.echo;
    echo["instructions"] = body.contains("instructions") ? body["instructions"] : ojson();
    echo["max_output_tokens"] = body.contains("max_output_tokens") ? body["max_output_tokens"] : ojson();
    echo["metadata"] = present(body, "metadata") ? body["metadata"] : ojson::object();
    echo["parallel_tool_calls"] =
        present(body, "parallel_tool_calls") ? body["parallel_tool_calls"] : ojson(true);
    echo["previous_response_id"] = nullptr;
    echo["reasoning"] = {{"effort", effort.empty() ? ojson() : ojson(effort)}, {"summary", nullptr}};
    echo["store"] = false;
    const ojson* text = present(body, "text");
    echo["text"] = {
        {"format", text && present(*text, "format") ? (*text)["format"] : ojson{{"type", "text"}}}};
    echo["tool_choice"] = present(body, "tool_choice") ? body["tool_choice"] : ojson("auto");
    echo["tools"] = tools ? *tools : ojson::array();
    echo["truncation"] = "disabled";
    echo["service_tier"] = "default";
    echo["background"] = false;
    for (const char* key : {"user", "prompt_cache_key", "safety_identifier"})
        if (const ojson* v = present(body, key)) echo[key] = *v;
    return out;
}

}  // namespace api
