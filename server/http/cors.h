// Permissive CORS, as llama-server: any origin is reflected with credentials allowed, and OPTIONS
// preflights are answered before routing and authentication (browsers send no Authorization on them).
#pragma once

#include "server/http/headers.h"
#include "server/http/response.h"

namespace server::http {

// Adds Access-Control-Allow-Origin (the request's Origin, or "*") and friends to `response_headers`.
void add_cors_headers(const Headers& request_headers, Headers& response_headers);

// 204 answer to an OPTIONS preflight: allows the requested method and headers.
Response preflight_response(const Headers& request_headers);

}  // namespace server::http
