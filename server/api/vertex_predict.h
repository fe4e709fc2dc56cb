// Google Cloud Vertex AI custom-container compatibility (llama-server's register_gcp_compat): with
// AIP_MODE=PREDICTION the server listens on AIP_HTTP_PORT (default 8080, over --port), answers health
// checks on AIP_HEALTH_ROUTE as /health does, and serves the prediction protocol on AIP_PREDICT_ROUTE
// (default /predict): {"instances": [...]} where each instance names the endpoint it is for in
// "@requestFormat" (a camelCase alias such as "chatCompletions", or the path "/v1/chat/completions") and
// is that endpoint's body; the answer is {"predictions": [...]}, each the endpoint's JSON answer or an
// {"error": {...}}. Instances run at once (at most 128), never streamed; each is sent to this server
// over loopback with the caller's credentials, so it goes through the same routes, limits and API key.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "server/http/server.h"

namespace api {

struct VertexConfig {
    bool enabled = false;       // AIP_MODE=PREDICTION
    std::string health_route;   // AIP_HEALTH_ROUTE ("": only /health)
    std::string predict_route;  // AIP_PREDICT_ROUTE, default /predict
    int port = 8080;            // AIP_HTTP_PORT
};

// Reads the AIP_* variables; routes get a leading '/'. Throws std::invalid_argument for a bad port.
VertexConfig vertex_config_from_env();

// Applies an enabled configuration to the HTTP server's: AIP_HTTP_PORT over --port (with a warning),
// the health route public as /health is. Throws std::invalid_argument with TLS on: the predict route
// calls the server over plain http.
void apply_vertex_config(const VertexConfig& vc, server::http::ServerConfig& hc);

// "/v1/chat/completions" -> "chatCompletions", "/apply-template" -> "applyTemplate": the path without a
// leading /v1, camelCase at '/', '-' and '_', up to a path parameter.
std::string vertex_format_name(std::string_view path);

// Registers the health alias and the predict route on `http` (after every other route, whose POST
// patterns become the formats). `port` gives the listening port once started; `api_prefix` is the
// routes' prefix. Throws std::invalid_argument when the predict route is one of the server's own.
void register_vertex_routes(server::http::Server& http, const VertexConfig& vc, std::function<uint16_t()> port,
                            const std::string& api_prefix);

}  // namespace api
