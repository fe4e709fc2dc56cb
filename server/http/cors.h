// CORS, as llama-server's --cors-origins, --cors-methods, --cors-headers and --cors-credentials: which
// pages may read this server's answers, and the headers that tell browsers so. OPTIONS preflights are
// answered before routing and authentication (browsers send no Authorization on them).
//
// Origins: "*" (any page; with credentials the request's Origin is reflected, since browsers refuse "*"
// with credentials), "localhost" (only pages served from localhost, 127.0.0.1 or [::1], any port), or a
// comma-separated list of exact origins ("https://app.example, http://localhost:5173"), reflected when
// the request's Origin is one of them. A refused origin gets no Access-Control-Allow-Origin: the request
// is still answered (CORS is enforced by browsers), but no page of that origin can read the answer.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/headers.h"
#include "server/http/response.h"

namespace server::http {

struct CorsPolicy {
    enum class Origins { any, localhost, list };

    bool enabled = true;  // false: no CORS headers at all, OPTIONS is routed like any method
    Origins origins = Origins::any;
    std::vector<std::string> allowed;  // Origins::list: the origins, scheme and host in lower case
    std::string methods = "GET, POST, DELETE, OPTIONS";  // Access-Control-Allow-Methods of preflights
    // Access-Control-Allow-Headers of preflights. "*": the headers the preflight asks for are echoed
    // (a "*" answer would not cover Authorization, so a page could not send its API key).
    std::string headers = "*";
    bool credentials = true;  // Access-Control-Allow-Credentials: cookies and Authorization allowed

    // The policy for the option values (llama-server's defaults: "*", "GET, POST, DELETE, OPTIONS", "*",
    // true). Throws std::invalid_argument with a message naming the option on a malformed value.
    static CorsPolicy from_options(std::string_view origins, std::string_view methods, std::string_view headers,
                                   bool credentials);

    // The Access-Control-Allow-Origin value for a request with this Origin header (nullopt: none, the
    // origin is refused).
    std::optional<std::string> allow_origin(std::optional<std::string_view> origin) const;
    // Whether the answer depends on the request's Origin (then responses carry Vary: Origin).
    bool varies_by_origin() const { return origins != Origins::any || credentials; }
    // The origins as the option gives them ("*", "localhost" or the list joined by ", ").
    std::string origins_text() const;
};

// Whether `origin` ("http://localhost:8080") is served from this machine: scheme http or https, host
// localhost, 127.0.0.1 or [::1], any port, nothing after it.
bool is_localhost_origin(std::string_view origin);

// Adds Access-Control-Allow-Origin (and Allow-Credentials, Vary) for the request to `response_headers`.
void add_cors_headers(const CorsPolicy& policy, const Headers& request_headers, Headers& response_headers);

// 204 answer to an OPTIONS preflight: the origin's headers, the allowed methods and headers.
Response preflight_response(const CorsPolicy& policy, const Headers& request_headers);

}  // namespace server::http
