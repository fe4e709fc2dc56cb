#include "server/api/restated_chat.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include "server/api/chat_request_options.h"
#include "server/api/json_fields.h"
#include "server/http/request_schemas.h"

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

// The top-level properties an embedded request schema declares, read once per schema.
const std::set<std::string>& declared_fields(std::string_view schema) {
    static std::mutex mu;
    static std::map<std::string, std::set<std::string>, std::less<>> cache;
    std::lock_guard<std::mutex> lk(mu);
    if (auto it = cache.find(schema); it != cache.end()) return it->second;
    std::set<std::string> names;
    const auto text = server::http::request_schema_text(std::string(schema) + ".json");
    if (!text) throw std::logic_error("no request schema named " + std::string(schema));
    const auto props = nlohmann::json::parse(*text).value("properties", nlohmann::json::object());
    for (const auto& [k, v] : props.items()) names.insert(k);
    return cache.emplace(std::string(schema), std::move(names)).first->second;
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
                           std::string_view schema, ojson& chat_body) {
    const std::set<std::string>& declared = declared_fields(schema);
    for (const auto& [key, value] : body.items()) {
        if (std::find(consumed.begin(), consumed.end(), key) != consumed.end()) continue;
        if (!declared.count(key)) continue;
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
