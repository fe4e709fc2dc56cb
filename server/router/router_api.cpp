#include "server/router/router_api.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "server/http/client.h"
#include "server/http/errors.h"
#include "server/http/json_depth.h"
#include "server/router/router_proxy.h"

namespace router {

using server::http::HttpError;
using server::http::Response;
using json = nlohmann::json;

namespace {
// The "model" of a POST /models/load or /models/unload body; a body without one is a 400 naming the field.
std::string body_model(const server::http::Request& req) {
    if (server::http::json_depth_exceeded(req.body)) throw HttpError(400, "the request body nests too deep");
    const json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) throw HttpError(400, "the request body must be a JSON object");
    auto it = body.find("model");
    if (it == body.end() || !it->is_string() || it->get<std::string>().empty())
        throw HttpError(400, "'model' is required: the name of a model of this router (see GET /models)");
    return it->get<std::string>();
}
}  // namespace

RouterApi::RouterApi(ModelManager& models, RouterConfig config, server::http::Server& http)
    : models_(models), config_(std::move(config)), http_(http) {}

RouterApi::~RouterApi() { wait_idle(std::chrono::seconds(10)); }

bool RouterApi::wait_idle(std::chrono::milliseconds timeout) { return forwarding_.wait_idle(timeout); }

void RouterApi::register_routes() {
    auto guard = [](std::function<Reply(Request&)> fn) {
        return [fn = std::move(fn)](Request& req) -> Reply {
            try {
                return fn(req);
            } catch (const HttpError& e) {
                return server::http::error_response(e);
            }
        };
    };
    auto bind = [this, &guard](Reply (RouterApi::*fn)(Request&)) {
        return guard([this, fn](Request& r) { return (this->*fn)(r); });
    };
    auto post = [this, &guard] { return guard([this](Request& r) { return forward(r, true); }); };
    auto get = [this, &guard] { return guard([this](Request& r) { return forward(r, false); }); };

    const auto health = [](Request&) -> Reply { return Response::json({{"status", "ok"}}); };
    http_.get("/health", health);
    http_.get("/v1/health", health);
    http_.get("/models", bind(&RouterApi::models));
    http_.get("/v1/models", bind(&RouterApi::models));
    http_.post("/models/load", bind(&RouterApi::load));
    http_.post("/models/unload", bind(&RouterApi::unload));
    http_.get("/models/sse", bind(&RouterApi::events));
    http_.post("/models", bind(&RouterApi::download));
    http_.del("/models", bind(&RouterApi::remove));
    http_.post("/v1/streams/lookup", bind(&RouterApi::streams_lookup));
    for (const char* path : {"/v1/stream", "/v1/stream/{id}"}) {
        http_.get(path, bind(&RouterApi::stream_forward));
        http_.del(path, bind(&RouterApi::stream_forward));
    }
    http_.get("/props", bind(&RouterApi::props));
    for (const char* path : {"/metrics", "/slots", "/lora-adapters"}) http_.get(path, get());
    for (const char* path :
         {"/props", "/completion", "/completions", "/v1/completions", "/chat/completions", "/v1/chat/completions",
          "/chat/completions/control", "/v1/chat/completions/control", "/chat/completions/input_tokens",
          "/v1/chat/completions/input_tokens",
          "/infill", "/embedding", "/embeddings", "/v1/embeddings", "/rerank", "/reranking", "/v1/rerank",
          "/v1/reranking", "/tokenize", "/detokenize", "/apply-template", "/lora-adapters", "/slots/{id}",
          "/v1/responses", "/v1/responses/input_tokens", "/responses", "/responses/input_tokens", "/v1/messages",
          "/v1/messages/count_tokens", "/v1/audio/transcriptions", "/audio/transcriptions"})
        http_.post(path, post());
}

bool RouterApi::autoload(const Request& req) const {
    const auto v = req.query_param("autoload");
    if (!v) return config_.autoload;
    return *v == "true" || *v == "1";
}

std::string RouterApi::requested_model(const Request& req, bool from_body) const {
    std::string name;
    if (from_body) {
        if (auto at = server::http::json_depth_exceeded(req.body))
            throw HttpError(400, "the request body nests deeper than " + std::to_string(server::http::kMaxJsonDepth) +
                                     " levels (at byte " + std::to_string(*at) + ")");
        const json body = json::parse(req.body, nullptr, false);
        if (body.is_discarded() || !body.is_object()) throw HttpError(400, "the request body must be a JSON object");
        if (auto it = body.find("model"); it != body.end() && !it->is_null()) {
            if (!it->is_string()) throw HttpError(400, "'model' must be a string");
            name = it->get<std::string>();
        }
    } else {
        name = req.query_param("model").value_or("");
    }
    // One model only: requests that name none (the chat UI's) go to it.
    if (name.empty()) name = models_.only_model();
    if (name.empty()) throw HttpError(400, "model name is missing from the request");
    auto canonical = models_.resolve(name);
    if (!canonical) throw HttpError(400, "model '" + name + "' not found");
    return *canonical;
}

RouterApi::Reply RouterApi::forward(Request& req, bool from_body) {
    const std::string name = requested_model(req, from_body);
    const bool load = autoload(req);
    auto out = req.defer();
    UpstreamRequest up;
    up.method = req.method;
    up.target = encode_path(req.path) + (req.query_string.empty() ? "" : "?" + req.query_string);
    up.body = std::move(req.body);
    up.headers = forward_headers(req.headers);
    forwarding_.run([this, up = std::move(up), out, name, load] {
        std::unique_ptr<ModelManager::Lease> lease;
        try {
            lease = models_.acquire(name, load, std::chrono::steady_clock::now() + config_.load_timeout);
        } catch (const HttpError& e) {
            out->respond(server::http::error_response(e));
            return;
        }
        if (out->cancelled()) return;
        relay_to_child(up, lease->port(), config_.request_timeout, out, name, [&lease] { lease.reset(); });
    });
    return out;
}

RouterApi::Reply RouterApi::models(Request& req) {
    if (const auto reload = req.query_param("reload"); reload && (*reload == "1" || *reload == "true")) {
        if (!config_.read_catalog) throw HttpError(501, "this router cannot reload its catalog", "not_supported_error");
        std::vector<ModelSpec> catalog;
        try {
            catalog = config_.read_catalog();
        } catch (const std::exception& e) {
            throw HttpError(500, std::string("cannot reload the model list (the old one stays): ") + e.what(),
                            "server_error");
        }
        models_.reload(std::move(catalog));
    }
    const auto created =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    json data = json::array();
    for (const ModelView& v : models_.list()) {
        json status{{"value", status_name(v.status)}};
        if (!v.args.empty()) status["args"] = v.args;
        if (v.failed) {
            status["failed"] = true;
            status["exit_code"] = v.exit_code;
        }
        json m{{"id", v.spec.name},
               {"object", "model"},
               {"owned_by", "llamacpp"},
               {"created", created},
               {"aliases", v.spec.aliases},
               {"tags", v.spec.tags},
               {"path", v.spec.path},
               {"source", v.spec.source},
               {"status", status}};
        // While loaded: what the model's own server says of it (meta: vocabulary, context, size).
        if (v.info.is_object())
            for (auto it = v.info.begin(); it != v.info.end(); ++it)
                if (!m.contains(it.key())) m[it.key()] = it.value();
        data.push_back(std::move(m));
    }
    return Response::json({{"object", "list"}, {"data", std::move(data)}});
}

RouterApi::Reply RouterApi::load(Request& req) {
    const std::string name = body_model(req);
    auto canonical = models_.resolve(name);
    if (!canonical) throw HttpError(404, "model is not found");
    models_.load(*canonical);
    return Response::json({{"success", true}});
}

RouterApi::Reply RouterApi::unload(Request& req) {
    const std::string name = body_model(req);
    auto canonical = models_.resolve(name);
    if (!canonical) throw HttpError(400, "model is not found");
    models_.unload(*canonical);
    return Response::json({{"success", true}});
}

RouterApi::Reply RouterApi::events(Request& req) {
    auto out = req.stream();
    auto gone = std::make_shared<std::atomic<bool>>(false);
    out->on_cancel([gone] { gone->store(true); });
    models_.subscribe({[out](const json& event) { return out->send(event.dump(-1, ' ', false, json::error_handler_t::replace)); },
                       [out] { out->close(); }, [gone] { return !gone->load(); }});
    return out;
}

RouterApi::Reply RouterApi::download(Request& req) {
    const std::string name = body_model(req);
    if (name.empty()) throw HttpError(400, "model must be a non-empty string");
    throw HttpError(501,
                    "cannot download '" + name +
                        "': this build fetches nothing over the network; put the GGUF file in --models-dir (or a "
                        "--models-preset section) and restart the router",
                    "not_supported_error");
}

RouterApi::Reply RouterApi::remove(Request& req) {
    const std::string name = req.query_param("model").value_or("");
    if (name.empty()) throw HttpError(400, "model must be a non-empty string");
    if (!models_.resolve(name)) throw HttpError(404, "model name=" + name + " is not found");
    // llama-server removes only models it downloaded into its cache; every model here is the user's file.
    throw HttpError(400, "model name=" + name + " is not removable (not from cache): it is a file of --models-dir "
                         "or --models-preset, which the router never deletes");
}

json RouterApi::lookup_streams(const json& ids, std::map<std::string, std::string>* owner) {
    json all = json::array();
    const std::string body = json{{"conversation_ids", ids}}.dump();
    for (const ModelView& v : models_.list()) {
        if (v.status != ModelStatus::loaded && v.status != ModelStatus::sleeping) continue;
        try {
            auto lease = models_.acquire(v.spec.name, false, std::chrono::steady_clock::now() + std::chrono::seconds(5));
            server::http::ClientOptions co;
            co.timeout = std::chrono::seconds(5);
            server::http::Client c("127.0.0.1", (std::uint16_t)lease->port(), co);
            const auto r = c.post("/v1/streams/lookup", body);
            if (r.status != 200) continue;
            const json found = json::parse(r.body, nullptr, false);
            if (!found.is_array()) continue;
            for (const auto& s : found) {
                if (owner && s.contains("conversation_id") && s["conversation_id"].is_string())
                    (*owner)[s["conversation_id"].get<std::string>()] = v.spec.name;
                all.push_back(s);
            }
        } catch (const std::exception&) {
            // unloaded meanwhile, or not answering: it holds nothing we can reach
        }
    }
    return all;
}

RouterApi::Reply RouterApi::streams_lookup(Request& req) {
    const json body = json::parse(req.body, nullptr, false);
    json ids = json::array();
    if (body.is_object())
        if (auto it = body.find("conversation_ids"); it != body.end() && it->is_array())
            for (const auto& v : *it)
                if (v.is_string()) ids.push_back(v);
    auto out = req.defer();
    forwarding_.run([this, ids, out] {
        out->respond(Response::json(ids.empty() ? json::array() : lookup_streams(ids, nullptr)));
    });
    return out;
}

RouterApi::Reply RouterApi::stream_forward(Request& req) {
    std::string id;
    if (auto it = req.path_params.find("id"); it != req.path_params.end()) id = it->second;
    else id = req.query_param("conv_id").value_or("");
    if (id.empty()) throw HttpError(400, "Missing conversation id (conv_id)");
    auto out = req.defer();
    UpstreamRequest up;
    up.method = req.method;
    up.target = encode_path(req.path) + (req.query_string.empty() ? "" : "?" + req.query_string);
    up.headers = forward_headers(req.headers);
    forwarding_.run([this, id, up = std::move(up), out] {
        std::map<std::string, std::string> owner;
        lookup_streams(json::array({id}), &owner);
        const auto it = owner.find(id);
        if (it == owner.end()) {
            if (up.method == "DELETE") {
                server::http::Response r;
                r.status = 204;
                out->respond(std::move(r));
            } else {
                out->respond(server::http::error_response(404, "Stream not found or expired", "not_found_error"));
            }
            return;
        }
        std::unique_ptr<ModelManager::Lease> lease;
        try {
            lease = models_.acquire(it->second, false, std::chrono::steady_clock::now() + config_.load_timeout);
        } catch (const HttpError& e) {
            out->respond(server::http::error_response(e));
            return;
        }
        relay_to_child(up, lease->port(), config_.request_timeout, out, it->second, [&lease] { lease.reset(); });
    });
    return out;
}

RouterApi::Reply RouterApi::props(Request& req) {
    if (req.query_param("model").value_or("").empty()) {
        // The router's own: no model, so a UI that reads the defaults finds empty ones.
        return Response::json({{"role", "router"},
                               {"max_instances", config_.models_max},
                               {"models_autoload", config_.autoload},
                               {"model_alias", "ggserve"},
                               {"model_path", "none"},
                               {"default_generation_settings", {{"params", json::object()}, {"n_ctx", 0}}},
                               {"ui_settings", config_.ui_settings},
                               {"webui_settings", config_.ui_settings},
                               {"cors_proxy_enabled", config_.cors_proxy},
                               {"server", {{"tools", config_.tools}}},  // the router's own /tools
                               {"build_info", config_.build_info}});
    }
    return forward(req, false);
}

}  // namespace router
