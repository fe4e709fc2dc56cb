#include "server/api/tools_api.h"

#include <spdlog/spdlog.h>

#include "server/http/errors.h"
#include "server/http/json_depth.h"
#include "engine/util/utf8_tail.h"

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
                return server::http::error_response(e);
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
    const tools::Tool* tool = toolbox_.find(name);
    if (!tool) throw HttpError(404, "unknown tool \"" + name + "\"", "invalid_request_error");
    const bool stream = body.value("stream", false);
    if (stream && !tool->streams)
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
    // x-tool-runtime names an isolate for this call (a running container or an ssh host), as llama-server
    // allows; a server whose tools are confined by --tools-runtime keeps them there.
    std::shared_ptr<const tools::ToolIo> call_io;
    if (const auto header = req.headers.get("x-tool-runtime"); header && !header->empty()) {
        const auto& runtime = toolbox_.runtime();
        const std::string asked(*header);
        if (runtime && !runtime->on_host() && asked != runtime->spec() && asked != runtime->container())
            throw HttpError(403, "this server's tools run in " + runtime->spec() +
                                     " (--tools-runtime); x-tool-runtime cannot move them elsewhere");
        if (!runtime || runtime->on_host()) {
            try {
                call_io = tools::make_isolate_io(tools::parse_runtime_spec(asked));
            } catch (const std::invalid_argument& e) {
                throw HttpError(400, std::string("x-tool-runtime: ") + e.what());
            }
        }
    }

    auto deferred = req.defer();
    ctx.cancelled = [weak = std::weak_ptr<server::http::DeferredResponse>(deferred), stopping = stopping_] {
        auto d = weak.lock();
        return stopping->load() || !d || d->cancelled();
    };
    pool_->serial()->post([tool, params = std::move(params), ctx = std::move(ctx), deferred, stream,
                           call_io = std::move(call_io), runtime = toolbox_.runtime(), stopping = stopping_]() mutable {
        try {
            // The runtime's I/O is taken here, off the HTTP threads: it may start its container again.
            if (call_io) ctx.io = std::move(call_io);
            else if (runtime) ctx.io = runtime->io();
            if (!stream) {
                deferred->respond(Response::json(tool->invoke(params, ctx)));
                return;
            }
            run_streamed(*tool, params, ctx, *deferred, *stopping);
        } catch (const std::exception& e) {
            spdlog::error("tool {}: {}", tool->name, e.what());
            deferred->respond(server::http::error_response(500, e.what()));
        }
    });
    return deferred;
}

// A streamed call answers SSE as llama-server does: {"chunk": TEXT} events as the output comes, then
// {"done": true} (with "error" when the call failed). A chunk never ends inside a UTF-8 character.
void ToolsApi::run_streamed(const tools::Tool& tool, const json& params, tools::CallContext ctx,
                            server::http::DeferredResponse& deferred, const std::atomic<bool>& stopping) {
    const auto out = deferred.stream();
    if (!out) return;  // the client is gone
    auto event = [](const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); };
    std::string held;  // the start of a character whose end has not come yet
    ctx.cancelled = [&out, &stopping] { return stopping.load() || out->cancelled(); };
    ctx.on_output = [&](std::string_view bytes) {
        held.append(bytes);
        const size_t keep = engine::incomplete_utf8_tail(held);
        if (held.size() == keep) return !out->cancelled();
        const bool ok = out->send(event({{"chunk", held.substr(0, held.size() - keep)}}));
        held.erase(0, held.size() - keep);
        return ok;
    };
    json done = {{"done", true}};
    try {
        tool.invoke(params, ctx);
        if (!held.empty()) out->send(event({{"chunk", held}}));
    } catch (const std::exception& e) {
        spdlog::error("tool {}: {}", tool.name, e.what());
        done["error"] = e.what();
    }
    out->send(event(done));
    out->close();
}

}  // namespace api
