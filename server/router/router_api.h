// The router's HTTP endpoints (llama-server's router mode): its own /health, the model list and
// /models/load, /models/unload, /props without a model; every other API route is forwarded to the
// server of the model the request names ("model" in a POST body, ?model= on a GET), loading it first
// when autoload allows.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "server/http/detached_tasks.h"
#include "server/http/server.h"
#include "server/router/model_manager.h"

namespace router {

struct RouterConfig {
    bool autoload = true;  // --models-autoload / --no-models-autoload; a request's ?autoload= overrides
    int models_max = 4;
    std::chrono::milliseconds request_timeout{std::chrono::seconds(600)};  // each wait on a child's answer
    std::chrono::milliseconds load_timeout{std::chrono::seconds(600)};
    nlohmann::json build_info;  // /props build_info
    // GET /models?reload=1 reads the catalog again with this (throws with the reason when it cannot).
    std::function<std::vector<ModelSpec>()> read_catalog;
    std::vector<std::string> tools;  // the built-in tools the router serves (/props server.tools)
    nlohmann::json ui_settings = nlohmann::json::object();  // /props ui_settings (--ui-config)
    bool cors_proxy = false;                                // /props cors_proxy_enabled (--ui-mcp-proxy)
};

class RouterApi {
  public:
    RouterApi(ModelManager& models, RouterConfig config, server::http::Server& http);
    ~RouterApi();  // wait_idle
    void register_routes();
    // Waits (at most `timeout`) until no forwarded request is left; returns whether none is.
    bool wait_idle(std::chrono::milliseconds timeout);

  private:
    using Request = server::http::Request;
    using Reply = server::http::Reply;
    Reply models(Request& req);
    Reply load(Request& req);
    Reply events(Request& req);       // GET /models/sse
    Reply download(Request& req);     // POST /models
    // Resumable streams: each loaded model's server holds its own; lookup asks them all, GET and DELETE
    // /v1/stream go to the one holding the conversation.
    Reply streams_lookup(Request& req);
    Reply stream_forward(Request& req);
    // The sessions the loaded models' servers hold of `ids`, and which model holds each.
    nlohmann::json lookup_streams(const nlohmann::json& ids, std::map<std::string, std::string>* owner);
    Reply remove(Request& req);       // DELETE /models
    Reply unload(Request& req);
    Reply props(Request& req);
    // Forwards to the named model's server; `from_body`: the name is the body's "model", else ?model=.
    Reply forward(Request& req, bool from_body);
    // The canonical name a request asks for (an alias resolved); HttpError 400 when missing or unknown.
    std::string requested_model(const Request& req, bool from_body) const;
    bool autoload(const Request& req) const;

    ModelManager& models_;
    const RouterConfig config_;
    server::http::Server& http_;
    server::http::DetachedTasks forwarding_{"router: forwarding failed"};
};

}  // namespace router
