// llama-server's MCP server list (--mcp-servers-config FILE, --mcp-servers-json JSON): the Cursor/Claude
// format {"mcpServers": {"NAME": {"command", "args": [...], "env": {...}, "cwd", "timeout_ms"}}}, one
// stdio MCP server per entry.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tools {

struct McpServerConfig {
    std::string name;                        // the entry's key; its tools are offered as NAME_TOOL
    std::string command;                     // run through PATH, without a shell
    std::vector<std::string> args;
    std::map<std::string, std::string> env;  // over the server's own environment
    std::string cwd;                         // "" = the server's working directory
    int timeout_ms = 30000;                  // each request's wait (initialize, tools/list, tools/call)
};

// Parses one JSON text (`source` names it in messages). As llama-server: no "mcpServers" object means no
// servers, an entry without a command is skipped; each such case adds a line to `warnings`. Throws
// std::runtime_error for text that is not JSON and for fields of the wrong type (llama-server's JSON
// library throws there too), naming the entry and the field.
std::vector<McpServerConfig> parse_mcp_config(const std::string& text, const std::string& source,
                                              std::vector<std::string>& warnings);

// Both options' lists, the file's first; a name already taken is skipped with a warning (names are unique
// across both). Throws std::runtime_error for an unreadable file and as parse_mcp_config.
std::vector<McpServerConfig> load_mcp_configs(const std::string& file, const std::string& json_text,
                                              std::vector<std::string>& warnings);

}  // namespace tools
