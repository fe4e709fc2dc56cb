#include "server/tools/toolbox.h"

#include <algorithm>

namespace tools {

std::vector<std::string> Toolbox::split_list(const std::string& value) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        const size_t comma = value.find(',', start);
        std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const size_t b = item.find_first_not_of(" \t");
        if (b != std::string::npos) out.push_back(item.substr(b, item.find_last_not_of(" \t") - b + 1));
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

std::string Toolbox::available_names() {
    std::string s;
    for (const Tool& t : tool_table()) s += (s.empty() ? "" : ", ") + t.name;
    return s;
}

Toolbox::Toolbox(const std::vector<std::string>& names) {
    const auto& table = tool_table();
    for (const std::string& n : names)
        if (n != "all" && std::none_of(table.begin(), table.end(), [&](const Tool& t) { return t.name == n; }))
            throw std::invalid_argument("unknown tool \"" + n + "\". available tools: " + available_names());
    const bool all = std::find(names.begin(), names.end(), "all") != names.end();
    for (const Tool& t : table)
        if (all || std::find(names.begin(), names.end(), t.name) != names.end()) tools_.push_back(&t);
}

void Toolbox::start_mcp() {
    if (!mcp_) return;
    mcp_->start();
    for (Tool& t : mcp_tool_rows(mcp_, names())) {
        own_.push_back(std::make_shared<const Tool>(std::move(t)));
        tools_.push_back(own_.back().get());
    }
}

std::vector<std::string> Toolbox::names() const {
    std::vector<std::string> out;
    for (const Tool* t : tools_) out.push_back(t->name);
    return out;
}

nlohmann::json Toolbox::list_json() const {
    nlohmann::json out = nlohmann::json::array();
    for (const Tool* t : tools_) out.push_back(t->to_json());
    return out;
}

const Tool* Toolbox::find(const std::string& name) const {
    for (const Tool* t : tools_)
        if (t->name == name) return t;
    return nullptr;
}

}  // namespace tools
