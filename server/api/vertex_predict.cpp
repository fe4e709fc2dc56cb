#include "server/api/vertex_predict.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdlib>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "server/http/client.h"
#include "server/http/errors.h"

namespace api {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxInstances = 128;

std::string env_or(const char* name, std::string fallback, bool route) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    std::string s = v;
    if (route && s.front() != '/') s.insert(s.begin(), '/');
    return s;
}

json error_of(int status, const std::string& message) { return server::http::error_body(status, message); }

// The headers that carry the caller's credentials on to the loopback request.
server::http::Headers credentials(const server::http::Headers& in) {
    server::http::Headers out;
    for (const char* h : {"authorization", "x-api-key"})
        if (auto v = in.get(h)) out.set(h, std::string(*v));
    return out;
}

}  // namespace

VertexConfig vertex_config_from_env() {
    VertexConfig vc;
    vc.enabled = env_or("AIP_MODE", "", false) == "PREDICTION";
    vc.health_route = env_or("AIP_HEALTH_ROUTE", "", true);
    vc.predict_route = env_or("AIP_PREDICT_ROUTE", "/predict", true);
    const std::string port = env_or("AIP_HTTP_PORT", "8080", false);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (*end != '\0' || p < 1 || p > 65535) throw std::invalid_argument("AIP_HTTP_PORT must be a port number, not '" + port + "'");
    vc.port = (int)p;
    return vc;
}

void apply_vertex_config(const VertexConfig& vc, server::http::ServerConfig& hc) {
    if (!vc.enabled) return;
    if (!hc.ssl_key_file.empty())
        throw std::invalid_argument("AIP_MODE=PREDICTION cannot be used with --ssl-key-file: the predict route sends "
                                    "each instance to this server over plain http");
    if (hc.port != vc.port)
        spdlog::warn("Vertex AI compatibility: AIP_HTTP_PORT {} is used instead of port {}", vc.port, hc.port);
    hc.port = (uint16_t)vc.port;
    if (!vc.health_route.empty()) hc.public_paths.push_back(vc.health_route);
}

std::string vertex_format_name(std::string_view path) {
    if (path.substr(0, 3) == "/v1" && path.size() > 3) path.remove_prefix(3);
    if (!path.empty() && path.front() == '/') path.remove_prefix(1);
    std::string out;
    bool cap = false;
    for (char c : path) {
        if (c == '{' || c == ':') break;  // a path parameter
        if (c == '/' || c == '-' || c == '_') {
            cap = true;
            continue;
        }
        out += cap ? (char)std::toupper((unsigned char)c) : c;
        cap = false;
    }
    return out;
}

void register_vertex_routes(server::http::Server& http, const VertexConfig& vc, std::function<uint16_t()> port,
                            const std::string& api_prefix) {
    std::map<std::string, std::string> alias;  // format name -> path (the first route of a name wins)
    std::map<std::string, bool> post_paths;
    for (const auto& [method, pattern] : http.routes()) {
        if (method == "POST" && pattern == vc.predict_route)
            throw std::invalid_argument("AIP_PREDICT_ROUTE=" + vc.predict_route + " is one of the server's own routes");
        if (method != "POST" || pattern.find('{') != std::string::npos) continue;
        alias.emplace(vertex_format_name(pattern), pattern);
        post_paths[pattern] = true;
    }

    if (!vc.health_route.empty() && vc.health_route != "/health") {
        http.get(vc.health_route, [port, api_prefix](server::http::Request& req) -> server::http::Reply {
            auto out = req.defer();
            std::thread([out, p = port(), api_prefix] {
                try {
                    server::http::Client c("127.0.0.1", p);
                    const auto r = c.get(api_prefix + "/health");
                    server::http::Response resp;
                    resp.status = r.status;
                    resp.body = r.body;
                    resp.headers.set("Content-Type", "application/json");
                    out->respond(std::move(resp));
                } catch (const std::exception& e) {
                    out->respond(server::http::error_response(503, e.what(), "unavailable_error"));
                }
            }).detach();
            return out;
        });
    }

    http.post(vc.predict_route, [port, api_prefix, alias, post_paths](server::http::Request& req) -> server::http::Reply {
        const json body = json::parse(req.body, nullptr, false);
        if (body.is_discarded()) throw server::http::HttpError(400, "the request body is not valid JSON");
        if (!body.is_object()) throw server::http::HttpError(400, "request body must be a JSON object");
        const auto it = body.find("instances");
        if (it == body.end() || !it->is_array())
            throw server::http::HttpError(400, "request body must include an array field named instances");
        if (it->size() > kMaxInstances)
            throw server::http::HttpError(400, "instances array exceeds maximum size of " + std::to_string(kMaxInstances));
        auto out = req.defer();
        std::thread([out, instances = *it, headers = credentials(req.headers), p = port(), api_prefix, alias, post_paths] {
            std::vector<std::future<json>> results;
            for (const json& instance : instances)
                results.push_back(std::async(std::launch::async, [&, instance]() -> json {
                    if (!instance.is_object()) return error_of(400, "each instance must be a JSON object");
                    const auto f = instance.find("@requestFormat");
                    if (f == instance.end() || !f->is_string())
                        return error_of(400, "each instance must include a string @requestFormat");
                    const std::string format = f->get<std::string>();
                    std::string path;
                    if (auto a = alias.find(format); a != alias.end()) path = a->second;
                    else if (post_paths.count(format)) path = format;
                    else return error_of(400, "no handler registered for @requestFormat: " + format);
                    json payload = instance;
                    payload.erase("@requestFormat");
                    if (payload.contains("stream")) payload["stream"] = false;  // predictions are whole answers
                    try {
                        server::http::ClientOptions co;
                        co.timeout = std::chrono::hours(1);  // a long generation; the server's own limits apply
                        server::http::Client c("127.0.0.1", p, co);
                        const auto r = c.post(api_prefix + path, payload.dump(-1, ' ', false, json::error_handler_t::replace), headers);
                        if (r.body.empty()) return nullptr;
                        const json parsed = json::parse(r.body, nullptr, false);
                        return parsed.is_discarded() ? json(r.body) : parsed;
                    } catch (const std::exception& e) {
                        return error_of(500, e.what());
                    }
                }));
            json predictions = json::array();
            for (auto& r : results) predictions.push_back(r.get());
            out->respond(server::http::Response::json({{"predictions", std::move(predictions)}}));
        }).detach();
        return out;
    });
    spdlog::info("Vertex AI compatibility: health route {}, predict route {}",
                 vc.health_route.empty() ? "/health" : vc.health_route, vc.predict_route);
}

}  // namespace api
