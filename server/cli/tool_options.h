// llama-server's built-in agent tool options for `serve`: --tools LIST (LLAMA_ARG_TOOLS) and
// -ag/--agent (`--tools all`), -no-ag/--no-agent (none). On the command line the last of them wins; the
// environment (LLAMA_ARG_TOOLS, LLAMA_ARG_AGENT) and then a --config file count only where the command
// line (then the environment) said nothing about tools.
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
};

void add_tool_options(ArgParser& ap, ToolOptions& to);

// Registers GET/POST /tools on `http` for the toolbox's tools and warns that they are on; nullptr (and
// nothing registered) when there are none.
std::unique_ptr<api::ToolsApi> serve_tools(std::unique_ptr<tools::Toolbox> toolbox, server::http::Server& http);

}  // namespace cli
