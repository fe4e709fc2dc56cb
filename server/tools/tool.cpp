// Tool rows' shared parts: GET /tools' entry, definitions, and the parameter check.
#include "server/tools/tool.h"

namespace tools {

using json = nlohmann::json;

json Tool::to_json() const {
    return {{"display_name", display_name},
            {"tool", name},
            {"type", type},
            {"permissions", {{"write", write}}},
            {"uses_cwd", uses_cwd},
            {"definition", definition}};
}

json function_definition(const std::string& name, const std::string& description, json properties,
                         json required) {
    json parameters = {{"type", "object"}, {"properties", std::move(properties)}};
    if (!required.empty()) parameters["required"] = std::move(required);
    return {{"type", "function"},
            {"function", {{"name", name}, {"description", description}, {"parameters", std::move(parameters)}}}};
}

json param(const char* type, const std::string& description) {
    return {{"type", type}, {"description", description}};
}

namespace {

bool has_type(const json& v, const std::string& type) {
    if (type == "string") return v.is_string();
    if (type == "integer") return v.is_number_integer();
    if (type == "number") return v.is_number();
    if (type == "boolean") return v.is_boolean();
    if (type == "array") return v.is_array();
    if (type == "object") return v.is_object();
    return true;
}

void check_value(const json& schema, const json& v, const std::string& where) {
    const std::string type = schema.value("type", "");
    if (!type.empty() && !has_type(v, type))
        throw ParamError("parameter '" + where + "' must be " + (type == "array" || type == "integer" ? "an " : "a ") +
                         type);
    if (type == "object" && schema.contains("properties")) {
        for (const auto& r : schema.value("required", json::array()))
            if (!v.contains(r.get<std::string>()))
                throw ParamError("missing required parameter '" + (where.empty() ? "" : where + ".") +
                                 r.get<std::string>() + "'");
        for (const auto& [key, sub] : schema["properties"].items())
            if (v.contains(key)) check_value(sub, v[key], where.empty() ? key : where + "." + key);
    }
    if (type == "array" && schema.contains("items"))
        for (size_t i = 0; i < v.size(); ++i) check_value(schema["items"], v[i], where + "[" + std::to_string(i) + "]");
}

}  // namespace

void check_params(const Tool& tool, const json& params) {
    if (!params.is_object()) throw ParamError("'params' must be an object");
    check_value(tool.definition["function"]["parameters"], params, "");
}

}  // namespace tools
