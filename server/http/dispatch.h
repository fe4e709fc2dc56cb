// The request pipeline above the wire: CORS preflight -> routing (GET/HEAD that no route matches go to
// the static fallback) -> API key -> handler, with every failure turned into an error response in the
// shape of the path's API (OpenAI's unless a path prefix has its own). Independent of sockets, so it is
// unit-testable.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http/auth.h"
#include "server/http/cors.h"
#include "server/http/errors.h"
#include "server/http/message.h"
#include "server/http/router.h"

namespace server::http {

struct DispatchPolicy {
    ApiKeyAuth auth;
    CorsPolicy cors;
    // Answers GET and HEAD requests that no route matches (the web UI's static files), without an API
    // key: the key protects the API, not the page. Empty: those requests get 404.
    Handler fallback;
    // Error bodies of APIs with their own error shape (Anthropic's), by path prefix: a path is covered
    // when it equals the prefix or continues it with '/'. Other paths get error_response's shape.
    std::vector<std::pair<std::string, ErrorFormatter>> error_formats;
    // --api-prefix: only paths equal to it or continuing it with '/' are served, as if the prefix were
    // not there ("/llm/health" is "/health", "/llm" is "/"); any other path is 404. "" = none.
    std::string path_prefix;

    // The error response for `path` in its API's shape.
    Response error_for(std::string_view path, const HttpError& error) const;
    Response error_for(std::string_view path, int status, std::string_view message,
                       std::string_view type = {}) const;
};

// The path under `prefix` ("/llm/v1/models" -> "/v1/models", "/llm" -> "/"), or nullopt when the path
// is outside it. An empty prefix keeps every path.
std::optional<std::string> strip_path_prefix(std::string_view path, std::string_view prefix);

// Runs the pipeline for `req` (path, raw target and headers must be set). Handler exceptions become
// errors: HttpError -> its status, anything else -> 500. Never throws.
Reply dispatch_request(const Router& router, const DispatchPolicy& policy, Request& req,
                       std::string_view raw_path);

}  // namespace server::http
