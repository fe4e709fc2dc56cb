#include "server/api/chat_request_options.h"

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
    if (it == body.end() || it->is_null()) return out;
    if (!it->is_object()) bad_request("'chat_template_kwargs' must be an object");
    for (const auto& [k, v] : it->items()) out[k] = v;
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

}  // namespace api
