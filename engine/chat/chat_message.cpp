#include <stdexcept>

#include "engine/chat/chat_template.h"

namespace engine::chat {

Json ChatMessage::to_json() const {
    Json j = Json::object();
    j["role"] = role;
    j["content"] = content.is_null() ? Json("") : content;
    if (!tool_calls.is_null() && !(tool_calls.is_array() && tool_calls.empty())) j["tool_calls"] = tool_calls;
    if (!tool_call_id.empty()) j["tool_call_id"] = tool_call_id;
    if (!name.empty()) j["name"] = name;
    if (!reasoning_content.empty()) j["reasoning_content"] = reasoning_content;
    return j;
}

ChatMessage ChatMessage::from_json(const Json& j) {
    if (!j.is_object()) throw std::invalid_argument("a chat message must be a JSON object");
    const auto role = j.find("role");
    if (role == j.end() || !role->is_string())
        throw std::invalid_argument("a chat message needs a string 'role'");
    ChatMessage m;
    m.role = role->get<std::string>();
    m.content = j.value("content", Json());
    if (!m.content.is_null() && !m.content.is_string() && !m.content.is_array()) {
        throw std::invalid_argument("message content must be a string, an array of parts or null");
    }
    m.tool_calls = j.value("tool_calls", Json());
    if (!m.tool_calls.is_null() && !m.tool_calls.is_array())
        throw std::invalid_argument("tool_calls must be an array");
    auto str = [&](const char* key) {
        const auto it = j.find(key);
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    m.tool_call_id = str("tool_call_id");
    m.name = str("name");
    m.reasoning_content = str("reasoning_content");
    return m;
}

Json messages_to_json(const std::vector<ChatMessage>& messages) {
    Json out = Json::array();
    for (const auto& m : messages) out.push_back(m.to_json());
    return out;
}

std::string content_text(const Json& content) {
    if (content.is_string()) return content.get<std::string>();
    std::string out;
    if (!content.is_array()) return out;
    // Text parts are joined with a new line, as llama-server joins them.
    bool first = true;
    for (const auto& part : content) {
        const std::string* text = nullptr;
        if (part.is_string()) {
            text = &part.get_ref<const std::string&>();
        } else if (part.is_object() && part.value("type", "") == "text" && part.contains("text") &&
                   part["text"].is_string()) {
            text = &part["text"].get_ref<const std::string&>();
        }
        if (!text) continue;
        if (!first) out += '\n';
        out += *text;
        first = false;
    }
    return out;
}

}  // namespace engine::chat
