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

static Reply run_handler(const Handler& handler, Request& req) {
    try {
        Reply reply = handler(req);
        if (!reply.is_async() && req.is_async()) {
            // The handler started a stream but returned a Response: a bug; the exchange is abandoned.
            spdlog::error("http: handler for {} {} started a stream but returned a response", req.method,
                          req.path);
            return error_response(500, "handler returned a response after starting a stream");
        }
        return reply;
    } catch (const HttpError& e) {
        return error_response(e.status(), e.what(), e.type());
    } catch (const std::exception& e) {
        spdlog::warn("http: handler for {} {} threw: {}", req.method, req.path, e.what());
        return error_response(500, e.what());
    } catch (...) {
        spdlog::warn("http: handler for {} {} threw a non-exception", req.method, req.path);
        return error_response(500, "unknown error");
    }
}

Reply dispatch_request(const Router& router, const DispatchPolicy& policy, Request& req,
                       std::string_view raw_path) {
    if (policy.cors && req.method == "OPTIONS") return preflight_response(req.headers);
    Router::Match m = router.match(req.method, raw_path);
    if (m.kind == Router::Match::Kind::not_found && policy.fallback &&
        (req.method == "GET" || req.method == "HEAD")) {
        return run_handler(policy.fallback, req);
    }
    if (!policy.auth.allows(req.path, req.headers)) return error_response(401, "Invalid API Key");

    switch (m.kind) {
        case Router::Match::Kind::not_found:
            return error_response(404, "File Not Found");
        case Router::Match::Kind::method_not_allowed: {
            Response r = error_response(405, "method " + req.method + " is not allowed for " + req.path);
            r.headers.set("Allow", join(m.allowed, ", "));
            return r;
        }
        case Router::Match::Kind::found:
            break;
    }
    req.path_params = std::move(m.params);
    return run_handler(*m.handler, req);
}

}  // namespace server::http
