// Helpers shared by the chat unit tests.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/chat/jinja_template.h"

namespace chat_test {

using Json = nlohmann::ordered_json;

// Render a template string with a JSON context (an object literal in raw-string form).
inline std::string render(const std::string& source, const std::string& context_json = "{}") {
    return engine::jinja::Template(source).render(Json::parse(context_json));
}

inline std::string templates_dir() {
    return std::string(GGSERVE_SHARED_DIR) + "/templates";
}

inline std::string read_template(const std::string& file_name) {
    std::ifstream in(templates_dir() + "/" + file_name, std::ios::binary);
    if (!in) throw std::runtime_error("missing shared template " + file_name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline std::vector<std::string> all_template_names() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(templates_dir())) {
        if (e.path().extension() == ".jinja") names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace chat_test
