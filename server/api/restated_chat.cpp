#include "server/api/restated_chat.h"

#include <algorithm>

#include "server/api/chat_request_options.h"
#include "server/api/json_fields.h"

namespace api {

namespace {

using ojson = nlohmann::ordered_json;

// The request's own chat_template_kwargs (an extension field), created when absent.
ojson& template_kwargs(ojson& chat_body) {
    ojson& kw = chat_body["chat_template_kwargs"];
    if (kw.is_null()) kw = ojson::object();
    if (!kw.is_object()) bad_request("'chat_template_kwargs' must be an object");
    return kw;
}

}  // namespace

void set_enable_thinking(ojson& chat_body, bool enabled) {
    ojson& kw = template_kwargs(chat_body);
    if (!kw.contains("enable_thinking")) kw["enable_thinking"] = enabled;
}

void apply_reasoning_effort(ojson& chat_body, const std::string& effort, std::string_view field) {
    std::string level;
    if (!reasoning_effort_level(effort, level))
        bad_request("'" + std::string(field) +
                    "' must be none, minimal, low, medium, high, xhigh or max, not '" + effort + "'");
    set_enable_thinking(chat_body, effort != "none");
    ojson& kw = template_kwargs(chat_body);
    if (!level.empty() && !kw.contains("reasoning_effort")) kw["reasoning_effort"] = level;
}

void copy_extension_fields(const ojson& body, const std::vector<std::string_view>& consumed,
                           ojson& chat_body) {
    for (const auto& [key, value] : body.items()) {
        if (std::find(consumed.begin(), consumed.end(), key) != consumed.end()) continue;
        if (key == "chat_template_kwargs" && chat_body.contains(key)) {
            // The API's own fields may have set variables already: the request's own come on top.
            if (!value.is_null()) {
                if (!value.is_object()) bad_request("'chat_template_kwargs' must be an object");
                for (const auto& [k, v] : value.items()) chat_body[key][k] = v;
            }
            continue;
        }
        chat_body[key] = value;
    }
}

}  // namespace api
