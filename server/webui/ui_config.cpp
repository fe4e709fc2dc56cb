#include "server/webui/ui_config.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace webui {

nlohmann::json parse_ui_config(const std::string& text, const std::string& source) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw std::runtime_error(source + ": not valid JSON: " + e.what());
    }
    if (!j.is_object())
        throw std::runtime_error(source + ": the UI settings must be a JSON object, such as {\"theme\": \"dark\"}");
    return j;
}

nlohmann::json load_ui_config(const std::string& inline_json, const std::string& file) {
    if (!inline_json.empty() && !file.empty())
        throw std::runtime_error("give --ui-config or --ui-config-file, not both");
    if (!inline_json.empty()) return parse_ui_config(inline_json, "--ui-config");
    if (file.empty()) return nlohmann::json::object();
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("--ui-config-file: cannot read '" + file + "'");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw std::runtime_error("--ui-config-file: cannot read '" + file + "'");
    return parse_ui_config(ss.str(), "--ui-config-file " + file);
}

}  // namespace webui
