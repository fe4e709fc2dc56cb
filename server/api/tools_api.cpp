#include "server/api/tools_api.h"

#include <spdlog/spdlog.h>

#include "server/http/errors.h"
#include "server/http/json_depth.h"

namespace api {

using json = nlohmann::json;
using server::http::HttpError;
using server::http::Reply;
using server::http::Request;
using server::http::Response;

ToolsApi::ToolsApi(tools::Toolbox toolbox, server::http::Server& http, int n_threads)
    : toolbox_(std::move(toolbox)), http_(http), pool_(std::make_unique<FormatPool>(n_threads)) {}

ToolsApi::~ToolsApi() {
    stopping_->store(true);
    pool_.reset();
}

void ToolsApi::register_routes() {
    auto guard = [this](Reply (ToolsApi::*fn)(Request&)) {
        return [this, fn](Request& req) -> Reply {
            try {
                return (this->*fn)(req);
            } catch (const HttpError& e) {
                return server::http::error_response(e.status(), e.what(), e.type());
            } catch (const std::exception& e) {
                spdlog::error("{} {}: {}", req.method, req.path, e.what());
                return server::http::error_response(500, e.what());
            }
        };
    };
    http_.get("/tools", guard(&ToolsApi::list));
    http_.post("/tools", guard(&ToolsApi::call));
}

Reply ToolsApi::list(Request&) { return Response::json(toolbox_.list_json()); }

Reply ToolsApi::call(Request& req) {
    if (auto at = server::http::json_depth_exceeded(req.body))
        throw HttpError(400, "JSON nested deeper than " + std::to_string(server::http::kMaxJsonDepth) +
                                 " levels (at byte " + std::to_string(*at) + ")");
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded()) throw HttpError(400, "invalid JSON in the request body");
    if (!body.is_object()) throw HttpError(400, "the request body must be a JSON object");
    if (!body.contains("tool") || !body["tool"].is_string())
        throw HttpError(400, "'tool' is required and must be a string");
    const std::string name = body["tool"].get<std::string>();
    json params = body.contains("params") ? body["params"] : json::object();
    if (!params.is_object()) throw HttpError(400, "'params' must be an object");
    if (body.contains("stream") && !body["stream"].is_boolean()) throw HttpError(400, "'stream' must be a boolean");
    // llama-server runs tools in a container or over ssh when asked (x-tool-runtime, --tools-runtime);
    // this build has no such runtimes, and a call asking for one must not quietly run on the host.
    if (const auto runtime = req.headers.get("x-tool-runtime"); runtime && !runtime->empty())
        throw HttpError(501, "tool runtimes (x-tool-runtime) are not supported: tools run on the server's host");
    const tools::Tool* tool = toolbox_.find(name);
    if (!tool) throw HttpError(404, "unknown tool \"" + name + "\"", "invalid_request_error");
    if (body.value("stream", false))
        throw HttpError(400, "tool \"" + name + "\" does not support stream = true");
    // Set from headers only: a model's arguments cannot choose them.
    params.erase("cwd");
    params.erase("runtime");
    params.erase("resp_type");
    try {
        if (tool->check_schema) tools::check_params(*tool, params);
    } catch (const tools::ParamError& e) {
        throw HttpError(400, std::string("tool \"") + name + "\": " + e.what());
    }
    tools::CallContext ctx;
    ctx.cwd = std::string(req.headers.value_or("x-tool-cwd"));
    ctx.base64 = req.headers.value_or("x-resp-type") == "base64";

    auto deferred = req.defer();
    ctx.cancelled = [weak = std::weak_ptr<server::http::DeferredResponse>(deferred), stopping = stopping_] {
        auto d = weak.lock();
        return stopping->load() || !d || d->cancelled();
    };
    pool_->serial()->post([tool, params = std::move(params), ctx = std::move(ctx), deferred] {
        try {
            deferred->respond(Response::json(tool->invoke(params, ctx)));
        } catch (const std::exception& e) {
            spdlog::error("tool {}: {}", tool->name, e.what());
            deferred->respond(server::http::error_response(500, e.what()));
        }
    });
    return deferred;
}

}  // namespace api
