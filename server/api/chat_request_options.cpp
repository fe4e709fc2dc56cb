#include "server/api/chat_request_options.h"

#include <climits>
#include <cstdint>
#include <stdexcept>

#include "server/api/json_fields.h"

namespace api {

namespace {

bool known_format(const std::string& v) {
    return v == "none" || v == "deepseek" || v == "auto" || v == "deepseek-legacy";
}

}  // namespace

nlohmann::ordered_json chat_template_kwargs(const nlohmann::ordered_json& body,
                                            const nlohmann::ordered_json& defaults, int reasoning_budget) {
    nlohmann::ordered_json out = defaults.is_object() ? defaults : nlohmann::ordered_json::object();
    if (reasoning_budget == 0 && !out.contains("enable_thinking")) out["enable_thinking"] = false;
    const auto it = body.find("chat_template_kwargs");
    if (it != body.end() && !it->is_null()) {
        if (!it->is_object()) bad_request("'chat_template_kwargs' must be an object");
        for (const auto& [k, v] : it->items()) out[k] = v;
    }
    // Nothing said thinking is off: templates get enable_thinking true, as llama-server passes it, so that
    // those testing `not enable_thinking` (R1 distills, QwQ, Command R7B) open their reasoning block.
    if (!out.contains("enable_thinking")) out["enable_thinking"] = true;
    return out;
}

bool extract_reasoning(const nlohmann::ordered_json& body, const std::string& fallback) {
    std::string format = fallback;
    const auto it = body.find("reasoning_format");
    if (it != body.end() && !it->is_null()) {
        if (!it->is_string()) bad_request("'reasoning_format' must be a string");
        format = it->get<std::string>();
        if (!known_format(format))
            bad_request("'reasoning_format' must be 'none', 'deepseek' or 'auto', not '" + format + "'");
    }
    return format != "none";
}

void check_reasoning_format(const std::string& value) {
    if (!known_format(value))
        throw std::invalid_argument("--reasoning-format must be none, deepseek or auto, not '" + value + "'");
}

int request_reasoning_budget(const nlohmann::ordered_json& body, int fallback) {
    for (const char* name : {"reasoning_budget_tokens", "thinking_budget_tokens"}) {
        const nlohmann::ordered_json* v = present(body, name);
        if (!v) continue;
        if (!v->is_number_integer())
            bad_request(std::string("'") + name + "' must be an integer");
        const int64_t n = v->get<int64_t>();
        if (n < -1 || n > INT32_MAX)
            bad_request(std::string("'") + name + "' must be -1 (the server's budget) or a token count, not " +
                        std::to_string(n));
        if (n >= 0) return (int)n;
    }
    return fallback;
}

std::string request_budget_message(const nlohmann::ordered_json& body, const std::string& fallback) {
    const nlohmann::ordered_json* v = present(body, "reasoning_budget_message");
    if (!v) return fallback;
    if (!v->is_string()) bad_request("'reasoning_budget_message' must be a string");
    return v->get<std::string>();
}

void require_text_content(const nlohmann::ordered_json& messages) {
    if (!messages.is_array()) return;
    for (size_t i = 0; i < messages.size(); ++i) {
        const nlohmann::ordered_json* content = messages[i].is_object() ? present(messages[i], "content") : nullptr;
        if (!content || !content->is_array()) continue;
        for (size_t k = 0; k < content->size(); ++k) {
            const auto& part = (*content)[k];
            if (part.is_string() || !part.is_object()) continue;
            // The request schema admits text, refusal, image_url, input_audio, input_video and file parts.
            const std::string type = string_or_empty(part, "type");
            if (type == "text" || type == "refusal") continue;
            bad_request("'messages[" + std::to_string(i) + "].content[" + std::to_string(k) + "]': " + type +
                        " parts are not supported: this server's model reads text only");
        }
    }
}

std::string take_assistant_prefill(nlohmann::ordered_json& messages, nlohmann::ordered_json* turn) {
    if (!messages.is_array() || messages.empty()) return "";
    const nlohmann::ordered_json& last = messages.back();
    if (!last.is_object() || last.value("role", "") != "assistant") return "";
    if (const auto* calls = present(last, "tool_calls"); calls && !(calls->is_array() && calls->empty()))
        return "";
    std::string text;
    if (const auto* content = present(last, "content")) {
        if (content->is_string()) {
            text = content->get<std::string>();
        } else if (content->is_array()) {
            for (const auto& part : *content)
                if (part.is_object() && part.value("type", "") == "text") text += string_or_empty(part, "text");
        }
    }
    if (text.empty()) return "";
    if (turn) *turn = last;
    messages.erase(messages.size() - 1);
    return text;
}

bool reasoning_effort_level(const std::string& effort, std::string& level) {
    if (effort == "minimal" || effort == "low") {
        level = "low";
    } else if (effort == "medium") {
        level = "medium";
    } else if (effort == "high" || effort == "xhigh" || effort == "max") {
        level = "high";
    } else if (effort == "none") {
        level.clear();
    } else {
        return false;
    }
    return true;
}

void apply_reasoning_switch(const std::string& value, nlohmann::ordered_json& kwargs) {
    bool enabled;
    if (value == "on" || value == "enabled" || value == "true" || value == "1") {
        enabled = true;
    } else if (value == "off" || value == "disabled" || value == "false" || value == "0") {
        enabled = false;
    } else if (value == "auto" || value == "-1") {
        return;
    } else {
        throw std::invalid_argument("-rea/--reasoning must be on, off or auto, not '" + value + "'");
    }
    if (!kwargs.contains("enable_thinking")) kwargs["enable_thinking"] = enabled;
}

void apply_reasoning_effort_default(const std::string& value, nlohmann::ordered_json& kwargs) {
    if (value == "default") return;
    std::string level;
    if (!reasoning_effort_level(value, level))
        throw std::invalid_argument(
            "--reasoning-effort must be default, none, minimal, low, medium, high, xhigh or max, not '" + value +
            "'");
    if (level.empty()) {
        if (!kwargs.contains("enable_thinking")) kwargs["enable_thinking"] = false;
    } else if (!kwargs.contains("reasoning_effort")) {
        kwargs["reasoning_effort"] = level;
    }
}

void apply_reasoning_preserve(bool preserve, nlohmann::ordered_json& kwargs) {
    if (!kwargs.contains("preserve_thinking")) kwargs["preserve_thinking"] = preserve;
    if (!kwargs.contains("clear_thinking")) kwargs["clear_thinking"] = !preserve;
    if (!kwargs.contains("truncate_history_thinking")) kwargs["truncate_history_thinking"] = !preserve;
}

}  // namespace api
