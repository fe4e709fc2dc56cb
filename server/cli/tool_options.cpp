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
    ap.option("--mcp-servers-config", "FILE",
              "experimental: a JSON file listing stdio MCP servers ({\"mcpServers\": {\"NAME\": {\"command\", \"args\", "
              "\"env\", \"cwd\", \"timeout_ms\"}}}, Cursor/Claude's format); the server starts them and offers their "
              "tools at GET/POST /tools as NAME_TOOL, beside the built-in ones. They run as the server's user: do "
              "not expose such a server to untrusted clients",
              &to.mcp_config);
    ap.option("--mcp-servers-json", "JSON", "experimental: the same list of MCP servers, inline", &to.mcp_json);
    ap.option("--tools-runtime", "SPEC",
              "experimental: where the built-in tools read, write and run commands: docker:IMAGE or podman:IMAGE "
              "(a container the server starts from IMAGE at startup and removes when it stops), "
              "docker-container:ID or podman-container:ID (a running container), ssh:[USER@]HOST (key "
              "authentication, a known host key; remoting, not isolation). The isolate needs sh, cat, head, wc, "
              "mkdir, dirname, find and timeout (default: this host)",
              &to.runtime);
    ap.flag("-ag,--agent", "--tools all and --ui-mcp-proxy: every built-in tool and the MCP CORS proxy",
            [&to, decide] {
                if (decide()) to.names = {"all"}, to.agent = true;
            });
    ap.flag("-no-ag,--no-agent", "no built-in tools (clears --tools and -ag)", [&to, decide] {
        if (decide()) to.names.clear(), to.agent = false;
    });
}

std::unique_ptr<tools::Toolbox> make_toolbox(const ToolOptions& to, std::vector<std::string>& warnings) {
    std::unique_ptr<tools::Toolbox> tb;
    try {
        tb = std::make_unique<tools::Toolbox>(to.names);
    } catch (const std::invalid_argument& e) {
        throw ArgError(std::string("--tools: ") + e.what());
    }
    if (!to.mcp_config.empty() || !to.mcp_json.empty()) {
        std::vector<tools::McpServerConfig> configs;
        try {
            configs = tools::load_mcp_configs(to.mcp_config, to.mcp_json, warnings);
        } catch (const std::runtime_error& e) {
            throw ArgError(e.what());
        }
        if (!configs.empty()) tb->set_mcp(std::make_shared<tools::McpServers>(std::move(configs)));
    }
    if (!to.runtime.empty()) {
        try {
            tools::parse_runtime_spec(to.runtime);
        } catch (const std::invalid_argument& e) {
            throw ArgError(std::string("--tools-runtime: ") + e.what());
        }
    }
    if (tb->empty()) return nullptr;
    return tb;
}

void start_tools_runtime(const ToolOptions& to, tools::Toolbox* toolbox) {
    if (to.runtime.empty()) return;
    if (!toolbox || toolbox->names().empty()) {  // before start_mcp: the built-in tools only
        spdlog::warn("--tools-runtime {}: no built-in tools are enabled (--tools), nothing runs there", to.runtime);
        return;
    }
    toolbox->set_runtime(std::make_shared<tools::ToolsRuntime>(to.runtime));
}

std::unique_ptr<api::ToolsApi> serve_tools(std::unique_ptr<tools::Toolbox> toolbox, server::http::Server& http) {
    if (!toolbox || toolbox->empty()) return nullptr;
    std::string list, servers;
    for (const auto& n : toolbox->names()) list += (list.empty() ? "" : ", ") + n;
    if (toolbox->mcp())
        for (const auto& c : toolbox->mcp()->configs()) servers += (servers.empty() ? "" : ", ") + c.name;
    auto tools_api = std::make_unique<api::ToolsApi>(std::move(*toolbox), http);
    tools_api->register_routes();
    if (!servers.empty())
        spdlog::warn("MCP servers are enabled ({}; tools: {}): they run as this user; do not expose this server "
                     "to untrusted environments (experimental)",
                     servers, list.empty() ? "none" : list);
    else
        spdlog::warn("built-in tools are enabled ({}): they read, write and run anything this user can; do not "
                     "expose this server to untrusted environments (experimental)",
                     list);
    return tools_api;
}

}  // namespace cli
