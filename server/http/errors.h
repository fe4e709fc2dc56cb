// OpenAI-style error bodies {"error": {"message", "type", "code"}} with the matching HTTP status. Every
// error the HTTP layer produces goes through here; the API layer uses the same helpers.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "server/http/response.h"

namespace server::http {

// "invalid_request_error" for 400, "authentication_error" for 401, ... "server_error" for other 5xx.
std::string_view error_type_for_status(int status);

// {"error": {"message": ..., "type": ..., "code": status}}; `type` defaults to error_type_for_status.
// `code` is the HTTP status, as llama-server sends it.
nlohmann::json error_body(int status, std::string_view message, std::string_view type = {});

// The same body as a JSON Response with `status`.
Response error_response(int status, std::string_view message, std::string_view type = {});

// Builds an error response (status, message, type as for error_response) in some API's shape.
using ErrorFormatter = std::function<Response(int status, std::string_view message, std::string_view type)>;

// Thrown by handlers (or helpers such as parse_request_body) to answer with an error response.
class HttpError : public std::runtime_error {
  public:
    HttpError(int status, const std::string& message, std::string type = {})
        : std::runtime_error(message), status_(status), type_(std::move(type)) {}
    int status() const { return status_; }
    const std::string& type() const { return type_; }

  private:
    int status_;
    std::string type_;
};

}  // namespace server::http
