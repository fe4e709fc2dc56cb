#include "server/http/response.h"

#include <nlohmann/json.hpp>

namespace server::http {

Response Response::json(const nlohmann::json& body, int status) {
    Response r;
    r.status = status;
    r.headers.set("Content-Type", "application/json; charset=utf-8");
    // Replace invalid UTF-8 instead of throwing: a model can emit broken bytes mid-character.
    r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return r;
}

Response Response::text(std::string body, int status, std::string_view content_type) {
    Response r;
    r.status = status;
    r.headers.set("Content-Type", content_type);
    r.body = std::move(body);
    return r;
}

}  // namespace server::http
