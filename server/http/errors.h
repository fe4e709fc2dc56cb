// OpenAI-style error bodies {"error": {"message", "type", "code"}} with the matching HTTP status. Every
// error the HTTP layer produces goes through here; the API layer uses the same helpers.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http/response.h"

namespace server::http {

// "invalid_request_error" for 400, "authentication_error" for 401, ... "server_error" for other 5xx.
std::string_view error_type_for_status(int status);

// Numbers a client can act on, sent beside the message (llama-server's "n_ctx", "n_prompt_tokens").
using ErrorDetails = std::vector<std::pair<std::string, int64_t>>;

// {"error": {"message": ..., "type": ..., "code": status, details...}}; `type` defaults to
// error_type_for_status. `code` is the HTTP status, as llama-server sends it.
nlohmann::json error_body(int status, std::string_view message, std::string_view type = {},
                          const ErrorDetails& details = {});

// The same body as a JSON Response with `status`.
Response error_response(int status, std::string_view message, std::string_view type = {},
                        const ErrorDetails& details = {});

// Thrown by handlers (or helpers such as parse_request_body) to answer with an error response.
class HttpError : public std::runtime_error {
  public:
    HttpError(int status, const std::string& message, std::string type = {}, ErrorDetails details = {})
        : std::runtime_error(message), status_(status), type_(std::move(type)), details_(std::move(details)) {}
    int status() const { return status_; }
    const std::string& type() const { return type_; }
    const ErrorDetails& details() const { return details_; }

  private:
    int status_;
    std::string type_;
    ErrorDetails details_;
};

// error_response of the error's status, message, type and details.
Response error_response(const HttpError& e);

// Builds an error response in some API's shape (error_response's for OpenAI's).
using ErrorFormatter = std::function<Response(const HttpError& error)>;

}  // namespace server::http
