// llama-server's agent tool options for `serve`: --tools LIST (LLAMA_ARG_TOOLS) and -ag/--agent
// (`--tools all`), -no-ag/--no-agent (none). On the command line the last of them wins; the environment
// (LLAMA_ARG_TOOLS, LLAMA_ARG_AGENT) and then a --config file count only where the command line (then the
// environment) said nothing about tools. --mcp-servers-config FILE / --mcp-servers-json JSON
// (LLAMA_ARG_MCP_SERVERS_CONFIG / _JSON): stdio MCP servers whose tools /tools offers beside the built-in
// ones (with or without --tools, as llama-server).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/api/tools_api.h"
#include "server/cli/args.h"
#include "server/tools/toolbox.h"

namespace cli {

struct ToolOptions {
    std::vector<std::string> names;  // "all" or tool names; empty: no tools, no /tools routes
    bool agent = false;              // -ag: the MCP CORS proxy (--ui-mcp-proxy) too
    // Where the options are being read from: 0 command line, 1 environment, 2 config file. Set before
    // ArgParser::apply_env and apply_config.
    int source = 0;
    int decided_by = 3;  // the strongest source that set them
    std::string mcp_config;  // --mcp-servers-config FILE
    std::string mcp_json;    // --mcp-servers-json JSON
    std::string runtime;     // --tools-runtime SPEC: where the built-in tools run ("" = this host)
};

void add_tool_options(ArgParser& ap, ToolOptions& to);

// The toolbox the options ask for: the built-in tools and the MCP servers' configuration (not started:
// Toolbox::start_mcp). nullptr when there is neither. Throws ArgError for an unknown tool, an unreadable
// MCP file, bad JSON or a malformed entry; what llama-server only warns about (no servers, an entry
// without a command, a name listed twice) goes to `warnings`.
std::unique_ptr<tools::Toolbox> make_toolbox(const ToolOptions& to, std::vector<std::string>& warnings);

// Starts where the toolbox's built-in tools run (--tools-runtime: a docker/podman container is started
// here); call it before Toolbox::start_mcp. Throws std::runtime_error when it cannot.
void start_tools_runtime(const ToolOptions& to, tools::Toolbox* toolbox);

// Registers GET/POST /tools on `http` for the toolbox's tools and warns that they are on; nullptr (and
// nothing registered) when there are none.
std::unique_ptr<api::ToolsApi> serve_tools(std::unique_ptr<tools::Toolbox> toolbox, server::http::Server& http);

}  // namespace cli
