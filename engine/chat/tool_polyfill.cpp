#include "engine/chat/tool_polyfill.h"

namespace engine::chat {

namespace {

bool non_empty_array(const Json& j) {
    return j.is_array() && !j.empty();
}

// A tool call as the generic format writes it: {"name", "arguments" (object when it parses), "id"}.
Json call_as_generic(const Json& call) {
    const Json& fn = call.contains("function") && call["function"].is_object() ? call["function"] : call;
    Json out = Json::object();
    out["name"] = fn.value("name", "");
    Json args = fn.contains("arguments") ? fn["arguments"] : Json::object();
    if (args.is_string()) {
        Json parsed = Json::parse(args.get<std::string>(), nullptr, false);
        if (!parsed.is_discarded()) args = std::move(parsed);
    }
    out["arguments"] = args;
    if (call.contains("id") && call["id"].is_string()) out["id"] = call["id"];
    return out;
}

}  // namespace

PolyfillNeeds polyfill_needs(const TemplateCaps& caps) {
    return {!caps.supports_tools, !caps.supports_tool_calls, !caps.supports_tool_responses};
}

std::string tools_system_text(const Json& tools) {
    std::string text = "You can call these tools:\n";
    for (const auto& t : tools) text += t.dump() + "\n";
    text +=
        "To call tools, reply with only this JSON: "
        "{\"tool_calls\": [{\"name\": \"<tool name>\", \"arguments\": {<arguments>}}]}";
    return text;
}

Json apply_tool_polyfills(const Json& messages, const Json& tools, const PolyfillNeeds& needs) {
    Json out = Json::array();
    if (needs.tools && non_empty_array(tools)) {
        const std::string decl = tools_system_text(tools);
        if (!messages.empty() && messages[0].is_object() && messages[0].value("role", "") == "system") {
            Json sys = messages[0];
            const std::string text = content_text(sys.value("content", Json("")));
            sys["content"] = text.empty() ? decl : text + "\n\n" + decl;
            out.push_back(std::move(sys));
        } else {
            out.push_back(Json{{"role", "system"}, {"content", decl}});
            if (!messages.empty()) out.push_back(messages[0]);
        }
        for (size_t i = 1; i < messages.size(); ++i) out.push_back(messages[i]);
    } else {
        out = messages;
    }
    if (!needs.tool_calls && !needs.tool_results) return out;
    for (auto& m : out) {
        if (!m.is_object()) continue;
        const std::string role = m.value("role", "");
        if (needs.tool_calls && role == "assistant" && non_empty_array(m.value("tool_calls", Json()))) {
            Json calls = Json::array();
            for (const auto& c : m["tool_calls"]) calls.push_back(call_as_generic(c));
            const std::string text = m.contains("content") ? content_text(m["content"]) : "";
            const std::string json_text = Json{{"tool_calls", calls}}.dump();
            m["content"] = text.empty() ? json_text : text + "\n" + json_text;
            m.erase("tool_calls");
        } else if (needs.tool_results && role == "tool") {
            std::string head = "Tool result";
            const std::string name = m.value("name", "");
            const std::string id = m.value("tool_call_id", "");
            if (!name.empty()) head += " of " + name;
            if (!id.empty()) head += " (call " + id + ")";
            Json user = {{"role", "user"},
                         {"content", head + ":\n" + content_text(m.value("content", Json("")))}};
            m = std::move(user);
        }
    }
    return out;
}

}  // namespace engine::chat
