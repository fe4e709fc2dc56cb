#include "server/http/dispatch.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "server/http/cors.h"
#include "server/http/errors.h"

namespace server::http {

static std::string join(const std::vector<std::string>& items, std::string_view sep) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += sep;
        out += item;
    }
    return out;
}

Response DispatchPolicy::error_for(std::string_view path, const HttpError& error) const {
    for (const auto& [prefix, format] : error_formats) {
        const bool covered = path.substr(0, prefix.size()) == prefix &&
                             (path.size() == prefix.size() || path[prefix.size()] == '/');
        if (covered) return format(error);
    }
    return error_response(error);
}

Response DispatchPolicy::error_for(std::string_view path, int status, std::string_view message,
                                   std::string_view type) const {
    return error_for(path, HttpError(status, std::string(message), std::string(type)));
}

static Reply run_handler(const DispatchPolicy& policy, const Handler& handler, Request& req) {
    try {
        Reply reply = handler(req);
        if (!reply.is_async() && req.is_async()) {
            // The handler started a stream but returned a Response: a bug; the exchange is abandoned.
            spdlog::error("http: handler for {} {} started a stream but returned a response", req.method,
                          req.path);
            return policy.error_for(req.path, 500, "handler returned a response after starting a stream");
        }
        return reply;
    } catch (const HttpError& e) {
        return policy.error_for(req.path, e);
    } catch (const std::exception& e) {
        spdlog::warn("http: handler for {} {} threw: {}", req.method, req.path, e.what());
        return policy.error_for(req.path, 500, e.what());
    } catch (...) {
        spdlog::warn("http: handler for {} {} threw a non-exception", req.method, req.path);
        return policy.error_for(req.path, 500, "unknown error");
    }
}

std::optional<std::string> strip_path_prefix(std::string_view path, std::string_view prefix) {
    if (prefix.empty()) return std::string(path);
    if (path.substr(0, prefix.size()) != prefix) return std::nullopt;
    if (path.size() == prefix.size()) return std::string("/");
    if (path[prefix.size()] != '/') return std::nullopt;
    return std::string(path.substr(prefix.size()));
}

Reply dispatch_request(const Router& router, const DispatchPolicy& policy, Request& req,
                       std::string_view raw_path) {
    if (policy.cors.enabled && req.method == "OPTIONS") return preflight_response(policy.cors, req.headers);
    std::string unprefixed_raw;
    if (!policy.path_prefix.empty()) {
        auto raw = strip_path_prefix(raw_path, policy.path_prefix);
        auto decoded = strip_path_prefix(req.path, policy.path_prefix);
        if (!raw || !decoded) return policy.error_for(req.path, 404, "File Not Found");
        // The page at the prefix itself loads its assets and API by relative paths, which resolve under
        // the prefix only from "PREFIX/".
        if (raw_path.size() == policy.path_prefix.size() && policy.fallback &&
            (req.method == "GET" || req.method == "HEAD")) {
            Response r;
            r.status = 308;
            r.headers.set("Location", policy.path_prefix + "/");
            return r;
        }
        unprefixed_raw = std::move(*raw);
        raw_path = unprefixed_raw;
        req.path = std::move(*decoded);
    }
    Router::Match m = router.match(req.method, raw_path);
    if (m.kind == Router::Match::Kind::not_found && policy.fallback &&
        (req.method == "GET" || req.method == "HEAD")) {
        return run_handler(policy, policy.fallback, req);
    }
    if (!policy.auth.allows(req.path, req.headers)) return policy.error_for(req.path, 401, "Invalid API Key");

    switch (m.kind) {
        case Router::Match::Kind::not_found:
            return policy.error_for(req.path, 404, "File Not Found");
        case Router::Match::Kind::method_not_allowed: {
            Response r =
                policy.error_for(req.path, 405, "method " + req.method + " is not allowed for " + req.path);
            r.headers.set("Allow", join(m.allowed, ", "));
            return r;
        }
        case Router::Match::Kind::found:
            break;
    }
    req.path_params = std::move(m.params);
    return run_handler(policy, *m.handler, req);
}

}  // namespace server::http
