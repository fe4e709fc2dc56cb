// The request pipeline above the wire: CORS preflight -> routing (GET/HEAD that no route matches go to
// the static fallback) -> API key -> handler, with every failure turned into an OpenAI-style error
// response. Independent of sockets, so it is unit-testable.
#pragma once

#include "server/http/auth.h"
#include "server/http/message.h"
#include "server/http/router.h"

namespace server::http {

struct DispatchPolicy {
    ApiKeyAuth auth;
    bool cors = true;
    // Answers GET and HEAD requests that no route matches (the web UI's static files), without an API
    // key: the key protects the API, not the page. Empty: those requests get 404.
    Handler fallback;
};

// Runs the pipeline for `req` (path, raw target and headers must be set). Handler exceptions become
// errors: HttpError -> its status, anything else -> 500. Never throws.
Reply dispatch_request(const Router& router, const DispatchPolicy& policy, Request& req,
                       std::string_view raw_path);

}  // namespace server::http
