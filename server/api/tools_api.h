// GET /tools and POST /tools: llama-server's built-in agent tools over HTTP (registered only with
// --tools or -ag, as llama-server does; without them /tools is an unknown route). Calls run on their own
// threads (a FormatPool), never on the HTTP I/O threads nor the engine thread, so a command that runs
// for a minute holds one tool thread and nothing else.
#pragma once

#include <atomic>
#include <memory>

#include "server/api/format_pool.h"
#include "server/http/server.h"
#include "server/tools/toolbox.h"

namespace api {

class ToolsApi {
  public:
    // n_threads: tool calls that can run at once (more wait in order).
    ToolsApi(tools::Toolbox toolbox, server::http::Server& http, int n_threads = 4);
    ~ToolsApi();  // kills the commands of running calls, then waits for them
    void register_routes();
    const tools::Toolbox& toolbox() const { return toolbox_; }

  private:
    server::http::Reply list(server::http::Request& req);
    server::http::Reply call(server::http::Request& req);
    static void run_streamed(const tools::Tool& tool, const nlohmann::json& params, tools::CallContext ctx,
                             server::http::DeferredResponse& deferred, const std::atomic<bool>& stopping);

    tools::Toolbox toolbox_;
    server::http::Server& http_;
    std::shared_ptr<std::atomic<bool>> stopping_ = std::make_shared<std::atomic<bool>>(false);
    std::unique_ptr<FormatPool> pool_;
};

}  // namespace api
