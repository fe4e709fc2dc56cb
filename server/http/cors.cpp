#include "server/http/cors.h"

#include <string>

namespace server::http {

void add_cors_headers(const Headers& request_headers, Headers& response_headers) {
    auto origin = request_headers.get("Origin");
    if (origin && !origin->empty()) {
        // "*" is not allowed together with credentials, so reflect the origin instead.
        response_headers.set("Access-Control-Allow-Origin", *origin);
        response_headers.set("Access-Control-Allow-Credentials", "true");
        // Keep what the handler varies on (Accept-Encoding for static files).
        auto vary = response_headers.get("Vary");
        response_headers.set("Vary", vary && !vary->empty() ? std::string(*vary) + ", Origin" : "Origin");
    } else {
        response_headers.set("Access-Control-Allow-Origin", "*");
    }
}

Response preflight_response(const Headers& request_headers) {
    Response r;
    r.status = 204;
    add_cors_headers(request_headers, r.headers);
    r.headers.set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS");
    // A "*" wildcard does not cover Authorization, so echo what the browser asks for.
    auto requested = request_headers.get("Access-Control-Request-Headers");
    r.headers.set("Access-Control-Allow-Headers", requested && !requested->empty() ? *requested : "*");
    r.headers.set("Access-Control-Max-Age", "86400");
    return r;
}

}  // namespace server::http
