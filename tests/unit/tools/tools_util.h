// Helpers for the built-in tool tests: a temporary directory removed afterwards, and calls through the
// same path as POST /tools (the parameter check, then the tool).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "server/tools/tool.h"

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "ggserve-tools-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string str() const { return path.string(); }
    // Writes `content` at the relative path `rel` (directories created).
    void write(const std::string& rel, const std::string& content) const {
        std::filesystem::create_directories((path / rel).parent_path());
        std::ofstream(path / rel, std::ios::binary) << content;
    }
    std::string read(const std::string& rel) const {
        std::ifstream f(path / rel, std::ios::binary);
        std::ostringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }
};

inline const tools::Tool& tool_named(const std::string& name) {
    for (const auto& t : tools::tool_table())
        if (t.name == name) return t;
    throw std::runtime_error("no tool " + name);
}

// Runs tool `name` with `params` in working directory `cwd`, as POST /tools does.
inline nlohmann::json call_tool(const std::string& name, const nlohmann::json& params, const std::string& cwd,
                                bool base64 = false) {
    const tools::Tool& t = tool_named(name);
    tools::check_params(t, params);
    tools::CallContext ctx;
    ctx.cwd = cwd;
    ctx.base64 = base64;
    return t.invoke(params, ctx);
}
