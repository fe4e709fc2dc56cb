#include "server/api/messages_request.h"

#include <set>
#include <string>

#include "server/api/json_fields.h"

namespace api {

namespace {

using ojson = nlohmann::ordered_json;

void append(std::string& to, const std::string& text) {
    if (!to.empty()) to += "\n";
    to += text;
}

[[noreturn]] void unsupported_block(const std::string& at, const std::string& type) {
    if (type == "image")
        bad_request("'" + at + "': image blocks are not supported: this server's model reads text only");
    bad_request("'" + at + "': content blocks of type '" + type + "' are not supported here");
}

std::string text_of(const ojson& content, const std::string& at, const char* separator);

// A document block's text: plain-text sources ("text", or "content" holding text blocks) are read as
// text; PDFs, URLs and file ids are refused, since this server reads text only. (llama-server drops
// every document silently, so a question about one is answered without it.)
std::string document_text(const ojson& block, const std::string& at) {
    const ojson* source = present(block, "source");
    const std::string type = source ? string_or_empty(*source, "type") : std::string();
    if (type == "text") return string_or_empty(*source, "data");
    if (type == "content") {
        const ojson* content = present(*source, "content");
        if (!content || !(content->is_string() || content->is_array()))
            bad_request("'" + at + ".source.content' must be a string or a list of text blocks");
        return text_of(*content, at + ".source.content", "\n");
    }
    bad_request("'" + at + "': document sources of type '" + type +
                "' are not supported: this server reads text documents only (source type text or content)");
}

// Text blocks (or a string) as one string, the blocks joined with `separator`.
std::string text_of(const ojson& content, const std::string& at, const char* separator) {
    if (content.is_string()) return content.get<std::string>();
    std::string out;
    for (size_t k = 0; k < content.size(); ++k) {
        const std::string bat = at + "[" + std::to_string(k) + "]";
        const std::string type = string_or_empty(content[k], "type");
        if (!out.empty()) out += separator;
        if (type == "text") out += string_or_empty(content[k], "text");
        else if (type == "document") out += document_text(content[k], bat);
        else unsupported_block(bat, type);
    }
    return out;
}

// The chat messages, turn by turn; consecutive messages of one role are combined.
class Conversation {
  public:
    void user_text(const std::string& text) {
        if (!out_.empty() && out_.back()["role"] == "user") {
            std::string joined = out_.back()["content"].get<std::string>();
            append(joined, text);
            out_.back()["content"] = joined;
        } else {
            out_.push_back({{"role", "user"}, {"content", text}});
        }
    }

    void tool_result(const std::string& id, const std::string& text, const std::string& at) {
        if (!call_ids_.count(id))
            bad_request("'" + at + "': tool_use_id '" + id + "' does not answer any earlier tool_use");
        out_.push_back(
            {{"role", "tool"}, {"tool_call_id", id}, {"name", call_names_[id]}, {"content", text}});
    }

    // One assistant turn: text, reasoning and tool calls.
    void assistant(const std::string& text, const std::string& reasoning, const ojson& calls) {
        for (const auto& c : calls) {
            call_ids_.insert(c["id"].get<std::string>());
            call_names_[c["id"].get<std::string>()] = c["function"]["name"].get<std::string>();
        }
        if (!out_.empty() && out_.back()["role"] == "assistant") {
            ojson& m = out_.back();
            std::string content = m["content"].get<std::string>(), r = m.value("reasoning_content", "");
            append(content, text);
            append(r, reasoning);
            m["content"] = content;
            if (!r.empty()) m["reasoning_content"] = r;
            for (const auto& c : calls) m["tool_calls"].push_back(c);
            return;
        }
        ojson m = {{"role", "assistant"}, {"content", text}};
        if (!reasoning.empty()) m["reasoning_content"] = reasoning;
        if (!calls.empty()) m["tool_calls"] = calls;
        out_.push_back(std::move(m));
    }

    ojson& messages() { return out_; }

  private:
    ojson out_ = ojson::array();
    std::set<std::string> call_ids_;
    std::map<std::string, std::string> call_names_;
};

void restate_user(const ojson& content, const std::string& at, Conversation& conv) {
    if (content.is_string()) return conv.user_text(content.get<std::string>());
    std::string pending;  // text blocks in a row: one user message
    bool has_pending = false;
    for (size_t k = 0; k < content.size(); ++k) {
        const ojson& b = content[k];
        const std::string bat = at + "[" + std::to_string(k) + "]";
        const std::string type = string_or_empty(b, "type");
        if (type == "text" || type == "document") {
            append(pending, type == "text" ? string_or_empty(b, "text") : document_text(b, bat));
            has_pending = true;
        } else if (type == "tool_result") {
            if (has_pending) conv.user_text(pending);
            pending.clear();
            has_pending = false;
            // Its blocks run together and is_error adds nothing: llama-server's prompt (an error result
            // says what went wrong in its text).
            const std::string text =
                present(b, "content") ? text_of(b["content"], bat + ".content", "") : std::string();
            conv.tool_result(string_or_empty(b, "tool_use_id"), text, bat);
        } else {
            unsupported_block(bat, type);
        }
    }
    if (has_pending) conv.user_text(pending);
}

void restate_assistant(const ojson& content, const std::string& at, Conversation& conv) {
    if (content.is_string()) return conv.assistant(content.get<std::string>(), "", ojson::array());
    std::string text, reasoning;
    ojson calls = ojson::array();
    for (size_t k = 0; k < content.size(); ++k) {
        const ojson& b = content[k];
        const std::string type = string_or_empty(b, "type");
        if (type == "text") {
            append(text, string_or_empty(b, "text"));
        } else if (type == "thinking") {
            append(reasoning, string_or_empty(b, "thinking"));
        } else if (type == "redacted_thinking") {
            // Encrypted reasoning from Anthropic's models: nothing this model can read (llama-server
            // drops it too).
        } else if (type == "tool_use") {
            calls.push_back({{"id", b["id"]},
                             {"type", "function"},
                             {"function", {{"name", b["name"]}, {"arguments", b["input"].dump()}}}});
        } else {
            unsupported_block(at + "[" + std::to_string(k) + "]", type);
        }
    }
    conv.assistant(text, reasoning, calls);
}

// Tools as chat tools, as llama-server restates them: name, description ("" when absent) and the
// input_schema as parameters. A tool of another type (Anthropic's bash_*, text_editor_*, web_search_*)
// is offered by name with any arguments ({} parameters).
ojson restate_tools(const ojson& tools) {
    ojson out = ojson::array();
    for (const ojson& t : tools) {
        ojson fn = ojson::object();
        fn["name"] = t["name"];
        fn["description"] = present(t, "description") ? t["description"] : ojson("");
        fn["parameters"] = present(t, "input_schema") ? t["input_schema"] : ojson::object();
        out.push_back({{"type", "function"}, {"function", fn}});
    }
    return out;
}

void restate_tool_choice(const ojson& choice, ojson& chat) {
    const std::string type = string_or_empty(choice, "type");
    if (type == "auto") chat["tool_choice"] = "auto";
    if (type == "any") chat["tool_choice"] = "required";
    if (type == "none") chat["tool_choice"] = "none";
    if (type == "tool")
        chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", choice["name"]}}}};
    if (const ojson* d = present(choice, "disable_parallel_tool_use"))
        chat["parallel_tool_calls"] = !d->get<bool>();
}

void restate_thinking(const ojson& thinking, const ojson& body, RestatedChat& out) {
    if (present(thinking, "display"))
        bad_request(
            "'thinking.display' is not supported: thinking blocks always hold the model's whole reasoning");
    const std::string type = string_or_empty(thinking, "type");
    set_enable_thinking(out.body, type != "disabled");
    if (type != "enabled") return;
    const int64_t budget = thinking["budget_tokens"].get<int64_t>();
    if (const ojson* max = present(body, "max_tokens"); max && budget >= max->get<int64_t>())
        bad_request("'thinking.budget_tokens' must be less than 'max_tokens'");
    out.reasoning_budget = (int)budget;
}

void refuse_unsupported(const ojson& body) {
    for (const char* key : {"container", "diagnostics", "mcp_servers"})
        if (present(body, key)) bad_request("'" + std::string(key) + "' is not supported by this server");
    // context_management: Claude Code sends it with every turn; llama-server ignores it, and so does this
    // server (the whole conversation is used as given).
    if (const ojson* g = present(body, "inference_geo"))
        bad_request("'inference_geo' " + g->dump() + " is not supported: this server runs where it runs");
    if (const ojson* s = present(body, "speed"); s && *s != "standard")
        bad_request("'speed': only \"standard\" is supported");
}

}  // namespace

RestatedChat restate_messages_request(const ojson& body) {
    refuse_unsupported(body);
    RestatedChat out;
    ojson& chat = out.body;
    Conversation conv;
    if (const ojson* system = present(body, "system")) {
        const std::string text = text_of(*system, "system", "");  // blocks run together, as in llama-server
        conv.messages().push_back({{"role", "system"}, {"content", text}});
    }
    const ojson& messages = body["messages"];
    for (size_t i = 0; i < messages.size(); ++i) {
        const ojson& m = messages[i];
        const std::string at = "messages[" + std::to_string(i) + "].content";
        const bool last = i + 1 == messages.size();
        if (m["role"] == "user") {
            restate_user(m["content"], at, conv);
        } else if (last) {
            // A final assistant turn is a prefill: text only, continued by the reply.
            if (!m["content"].is_string())
                for (size_t k = 0; k < m["content"].size(); ++k)
                    if (string_or_empty(m["content"][k], "type") != "text")
                        bad_request(
                            "'" + at + "[" + std::to_string(k) +
                            "]': a final assistant message is a prefill the reply continues, so it may "
                            "hold only text");
            out.prefill = text_of(m["content"], at, "\n");
        } else {
            restate_assistant(m["content"], at, conv);
        }
    }
    if (conv.messages().empty() || (conv.messages().size() == 1 && conv.messages()[0]["role"] == "system"))
        bad_request("'messages' must hold at least one user message");
    chat["messages"] = std::move(conv.messages());

    if (const ojson* tools = present(body, "tools"); tools && !tools->empty())
        chat["tools"] = restate_tools(*tools);
    if (const ojson* choice = present(body, "tool_choice")) restate_tool_choice(*choice, chat);
    if (const ojson* max = present(body, "max_tokens")) chat["max_tokens"] = *max;
    if (const ojson* stop = present(body, "stop_sequences")) chat["stop"] = *stop;
    if (const ojson* thinking = present(body, "thinking")) restate_thinking(*thinking, body, out);
    if (const ojson* oc = present(body, "output_config")) {
        if (const ojson* e = present(*oc, "effort"))
            apply_reasoning_effort(chat, e->get<std::string>(), "output_config.effort");
        if (const ojson* f = present(*oc, "format")) {
            if (chat.contains("tools") && chat.value("tool_choice", ojson("auto")) != "none")
                bad_request(
                    "'output_config.format' cannot be combined with 'tools' on this server (unless "
                    "tool_choice is none)");
            chat["response_format"] = {{"type", "json_schema"},
                                       {"json_schema", {{"schema", (*f)["schema"]}}}};
        }
    }
    copy_extension_fields(
        body,
        {"model", "system", "messages", "tools", "tool_choice", "max_tokens", "stop_sequences", "thinking",
         "output_config", "metadata", "service_tier", "cache_control", "container", "diagnostics",
         "inference_geo", "speed", "mcp_servers", "context_management"},
        "messages", chat);
    return out;
}

}  // namespace api
