// The MCP servers of --mcp-servers-config / --mcp-servers-json, as llama-server runs them: each is started
// at startup, initialized and asked for its tools (at most 10 s each, all at once); one that fails is
// logged and its tools are missing. Its tools are offered through /tools as SERVER_TOOL (mcp_tool_rows).
// A call goes to the server's running process; one that has died is started again for the next call
// (after a failed start, the server is "unavailable" for 5 s). Calls to one server run concurrently,
// matched to their replies by JSON-RPC id, each bounded by the server's timeout_ms.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/tools/mcp_client.h"
#include "server/tools/mcp_config.h"
#include "server/tools/tool.h"

namespace tools {

struct McpLimits {
    std::chrono::milliseconds warmup{10000};  // startup, initialize and tools/list of one server
    std::chrono::milliseconds cooldown{5000};  // no new start this long after a failed one
    size_t max_line = McpClient::kMaxLine;
};

class McpServers {
  public:
    explicit McpServers(std::vector<McpServerConfig> configs, McpLimits limits = {});
    ~McpServers();  // ends waiting calls, kills every server's process group and reaps it

    // Starts every server and lists its tools (in parallel, each bounded by limits.warmup). Failures are
    // logged as warnings; those servers' tools are missing.
    void start();
    const std::vector<McpToolDef>& tools() const { return tools_; }
    const std::vector<McpServerConfig>& configs() const { return configs_; }

    // tools/call, its result shaped as llama-server's /tools answers it: {"plain_text_response": the text
    // parts joined by newlines}, or {"error": "..."} for an isError result, a JSON-RPC error, a timeout, a
    // dead or unavailable server.
    nlohmann::json call(const std::string& server, const std::string& tool, const nlohmann::json& arguments,
                        const std::function<bool()>& cancelled = {});

    // Ends the waits of running calls; later calls answer an error at once.
    void shutdown();

    // The running process of `server` (nullptr if none): for tests.
    std::shared_ptr<McpClient> client(const std::string& server);

  private:
    struct Server {
        McpServerConfig config;
        std::mutex start_mu;  // one (re)start at a time
        std::shared_ptr<McpClient> client;  // guarded by mu_
        std::chrono::steady_clock::time_point retry_after{};
    };
    // A running, initialized client, or why there is none.
    std::shared_ptr<McpClient> connect(Server& s, std::string& error, const std::function<bool()>& cancelled);

    std::vector<McpServerConfig> configs_;
    McpLimits limits_;
    std::vector<std::unique_ptr<Server>> servers_;
    std::vector<McpToolDef> tools_;
    std::mutex mu_;
    std::atomic<bool> stopping_{false};
};

// Shapes a tools/call result as llama-server does (see McpServers::call).
nlohmann::json mcp_result_to_response(const nlohmann::json& result);

// /tools rows for the servers' tools: name SERVER_TOOL, type "mcp", no write permission, the tool's own
// input schema as parameters (not checked here: the MCP server checks its arguments). Names taken by
// `taken` or by an earlier row are skipped with a warning, as llama-server does.
std::vector<Tool> mcp_tool_rows(const std::shared_ptr<McpServers>& servers, const std::vector<std::string>& taken);

}  // namespace tools
