#include "server/http/errors.h"

#include <nlohmann/json.hpp>

namespace server::http {

std::string_view error_type_for_status(int status) {
    switch (status) {
        case 401:
            return "authentication_error";
        case 403:
            return "permission_error";
        case 404:
            return "not_found_error";
        case 501:
            return "not_supported_error";
        case 503:
            return "unavailable_error";
        case 505:
            return "not_supported_error";
        default:
            break;
    }
    if (status >= 500) return "server_error";
    return "invalid_request_error";  // 400, 405, 408, 413, 414, 431, ...
}

nlohmann::json error_body(int status, std::string_view message, std::string_view type, const ErrorDetails& details) {
    nlohmann::json error{{"message", std::string(message)},
                         {"type", std::string(type.empty() ? error_type_for_status(status) : type)},
                         {"code", status}};
    for (const auto& [key, value] : details) error[key] = value;
    return nlohmann::json{{"error", std::move(error)}};
}

Response error_response(int status, std::string_view message, std::string_view type, const ErrorDetails& details) {
    return Response::json(error_body(status, message, type, details), status);
}

Response error_response(const HttpError& e) { return error_response(e.status(), e.what(), e.type(), e.details()); }

}  // namespace server::http
