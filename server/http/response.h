// An HTTP response as handlers build it; the server adds framing headers (Content-Length, Connection).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "server/http/headers.h"

namespace server::http {

struct Response {
    int status = 200;
    Headers headers;
    std::string body;

    // A JSON body with Content-Type application/json.
    static Response json(const nlohmann::json& body, int status = 200);
    static Response text(std::string body, int status = 200,
                         std::string_view content_type = "text/plain; charset=utf-8");
};

}  // namespace server::http
