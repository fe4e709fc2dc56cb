// `ggserve serve` in router mode (llama-server's): started with --models-dir and/or --models-preset and
// no -m, it serves many models, one `ggserve serve` child process per loaded model (server/router).
#pragma once

#include <memory>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "server/cli/args.h"
#include "server/api/vertex_predict.h"
#include "server/http/server_config.h"
#include "server/tools/toolbox.h"

namespace cli {

struct RouterCliOptions {
    std::string models_dir;     // --models-dir
    std::string models_preset;  // --models-preset
    int models_max = 4;         // --models-max (0 = no cap)
    bool autoload = true;       // --models-autoload / --no-models-autoload
    std::string tags;           // --tags: tags of every model (comma-separated)
    bool webui = true;          // --webui / --no-webui
    std::string webui_path;     // --path
    std::chrono::seconds timeout{600};
    api::VertexConfig vertex;   // AIP_MODE=PREDICTION: the predict route (the single server's too)  // --timeout: each wait on a model's server, and its loading
    nlohmann::json ui_settings = nlohmann::json::object();  // --ui-config / --ui-config-file
    bool ui_mcp_proxy = false;                              // --ui-mcp-proxy
};

// The router's options: added to serve's parser.
void add_router_options(ArgParser& ap, RouterCliOptions& ro);
bool router_mode_requested(const RouterCliOptions& ro);
// Runs the router until SIGINT/SIGTERM (blocked by the caller and taken here). `ap` holds the parsed
// command line, whose options (but the router's own) every model's server gets. Returns the exit code:
// 2 for a bad catalog (missing directory, malformed preset), 1 if the server cannot start.
// The router serves /tools itself when `toolbox` has tools; the models' servers get none.
int run_router(const ArgParser& ap, const RouterCliOptions& ro, const server::http::ServerConfig& hc,
               std::unique_ptr<tools::Toolbox> toolbox);

}  // namespace cli
