#include "server/tools/mcp_config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace tools {

using json = nlohmann::json;

namespace {

[[noreturn]] void bad_field(const std::string& source, const std::string& name, const std::string& what) {
    throw std::runtime_error(source + ": MCP server \"" + name + "\": " + what);
}

}  // namespace

std::vector<McpServerConfig> parse_mcp_config(const std::string& text, const std::string& source,
                                              std::vector<std::string>& warnings) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) throw std::runtime_error(source + ": not valid JSON");
    std::vector<McpServerConfig> out;
    if (!j.is_object() || !j.contains("mcpServers") || !j["mcpServers"].is_object()) {
        warnings.push_back(source + ": no \"mcpServers\" object, no MCP servers");
        return out;
    }
    for (const auto& [name, e] : j["mcpServers"].items()) {
        if (!e.is_object()) bad_field(source, name, "the entry must be an object");
        McpServerConfig c;
        c.name = name;
        auto str = [&](const char* key, std::string& dst) {
            if (!e.contains(key)) return;
            if (!e[key].is_string()) bad_field(source, name, std::string("\"") + key + "\" must be a string");
            dst = e[key].get<std::string>();
        };
        str("command", c.command);
        str("cwd", c.cwd);
        if (e.contains("args")) {
            if (!e["args"].is_array()) bad_field(source, name, "\"args\" must be an array of strings");
            for (const auto& a : e["args"]) {
                if (!a.is_string()) bad_field(source, name, "\"args\" must be an array of strings");
                c.args.push_back(a.get<std::string>());
            }
        }
        if (e.contains("env")) {
            if (!e["env"].is_object()) bad_field(source, name, "\"env\" must be an object of strings");
            for (const auto& [k, v] : e["env"].items()) {
                if (!v.is_string()) bad_field(source, name, "\"env\" must be an object of strings");
                c.env[k] = v.get<std::string>();
            }
        }
        if (e.contains("timeout_ms")) {
            if (!e["timeout_ms"].is_number_integer() || e["timeout_ms"].get<long long>() <= 0 ||
                e["timeout_ms"].get<long long>() > 24LL * 3600 * 1000)
                bad_field(source, name, "\"timeout_ms\" must be a positive integer (at most a day)");
            c.timeout_ms = e["timeout_ms"].get<int>();
        }
        if (c.command.empty()) {
            warnings.push_back(source + ": MCP server \"" + name + "\" has no command, skipped");
            continue;
        }
        out.push_back(std::move(c));
    }
    if (out.empty()) warnings.push_back(source + ": no MCP servers found");
    return out;
}

std::vector<McpServerConfig> load_mcp_configs(const std::string& file, const std::string& json_text,
                                              std::vector<std::string>& warnings) {
    std::vector<McpServerConfig> all;
    auto append = [&](std::vector<McpServerConfig> list) {
        for (auto& c : list) {
            bool taken = false;
            for (const auto& have : all) taken = taken || have.name == c.name;
            if (taken) {
                warnings.push_back("MCP server name \"" + c.name + "\" is listed twice, the second is skipped");
                continue;
            }
            all.push_back(std::move(c));
        }
    };
    if (!file.empty()) {
        std::ifstream f(file, std::ios::binary);
        if (!f) throw std::runtime_error("--mcp-servers-config: cannot read '" + file + "'");
        std::ostringstream ss;
        ss << f.rdbuf();
        if (f.bad()) throw std::runtime_error("--mcp-servers-config: cannot read '" + file + "'");
        append(parse_mcp_config(ss.str(), "--mcp-servers-config '" + file + "'", warnings));
    }
    if (!json_text.empty()) append(parse_mcp_config(json_text, "--mcp-servers-json", warnings));
    return all;
}

}  // namespace tools
