// The tools a server enables (`--tools LIST`, `-ag`, the tools of --mcp-servers-*) and the calls made to
// them, independent of HTTP.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/tools/mcp_servers.h"
#include "server/tools/tool.h"
#include "server/tools/tools_runtime.h"

namespace tools {

class Toolbox {
  public:
    // `names`: "all" or tool names (llama-server's --tools list, already split at commas; empty items are
    // ignored). Throws std::invalid_argument naming an unknown tool and the available ones.
    explicit Toolbox(const std::vector<std::string>& names);
    // Splits a --tools value at commas, trimming blanks.
    static std::vector<std::string> split_list(const std::string& value);
    // Every tool's name, in table order ("read_file, file_glob_search, ...").
    static std::string available_names();

    // Takes the MCP servers (configured, not yet started), which the toolbox keeps running while it lives.
    void set_mcp(std::shared_ptr<McpServers> servers) { mcp_ = std::move(servers); }
    // Starts the MCP servers and adds their tools after the built-in ones (see mcp_tool_rows).
    void start_mcp();
    const std::shared_ptr<McpServers>& mcp() const { return mcp_; }
    // Where the built-in tools run (--tools-runtime); nullptr: this host.
    void set_runtime(std::shared_ptr<ToolsRuntime> runtime) { runtime_ = std::move(runtime); }
    const std::shared_ptr<ToolsRuntime>& runtime() const { return runtime_; }

    // No tools and no MCP servers configured (with MCP servers /tools is served even if none of them
    // started, as llama-server).
    bool empty() const { return tools_.empty() && !mcp_; }
    std::vector<std::string> names() const;
    // GET /tools: one entry per enabled tool.
    nlohmann::json list_json() const;
    // The enabled tool of that name, or nullptr.
    const Tool* find(const std::string& name) const;

  private:
    std::vector<const Tool*> tools_;  // rows of tool_table() or of own_
    std::vector<std::shared_ptr<const Tool>> own_;
    std::shared_ptr<McpServers> mcp_;
    std::shared_ptr<ToolsRuntime> runtime_;
};

}  // namespace tools
