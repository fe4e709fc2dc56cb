#include "server/cli/tool_options.h"

#include <spdlog/spdlog.h>

#include "server/tools/toolbox.h"

namespace cli {

void add_tool_options(ArgParser& ap, ToolOptions& to) {
    // A source weaker than the one that already decided is ignored.
    auto decide = [&to]() {
        if (to.source > to.decided_by) return false;
        to.decided_by = to.source;
        return true;
    };
    ap.add("--tools", "TOOL1,TOOL2,...",
           "experimental: built-in tools for AI agents, served at GET/POST /tools; \"all\" for every tool. They "
           "read, write and run anything the server's user can: do not expose such a server to untrusted "
           "clients. Tools: " + tools::Toolbox::available_names() + " (default: none)",
           [&to, decide](const std::string& v) {
               if (decide()) to.names = tools::Toolbox::split_list(v);
           });
    ap.flag("-ag,--agent", "--tools all and --ui-mcp-proxy: every built-in tool and the MCP CORS proxy",
            [&to, decide] {
                if (decide()) to.names = {"all"}, to.agent = true;
            });
    ap.flag("-no-ag,--no-agent", "no built-in tools (clears --tools and -ag)", [&to, decide] {
        if (decide()) to.names.clear(), to.agent = false;
    });
}

std::unique_ptr<api::ToolsApi> serve_tools(std::unique_ptr<tools::Toolbox> toolbox, server::http::Server& http) {
    if (!toolbox || toolbox->empty()) return nullptr;
    std::string list;
    for (const auto& n : toolbox->names()) list += (list.empty() ? "" : ", ") + n;
    auto tools_api = std::make_unique<api::ToolsApi>(std::move(*toolbox), http);
    tools_api->register_routes();
    spdlog::warn("built-in tools are enabled ({}): they read, write and run anything this user can; do not "
                 "expose this server to untrusted environments (experimental)",
                 list);
    return tools_api;
}

}  // namespace cli
