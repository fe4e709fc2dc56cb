// Optional API-key check, as llama-server's --api-key: "Authorization: Bearer <key>" or "X-Api-Key: <key>".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/headers.h"

namespace server::http {

// The key a request presents: the Authorization value without its "Bearer " prefix, else X-Api-Key.
std::optional<std::string_view> presented_api_key(const Headers& headers);

class ApiKeyAuth {
  public:
    ApiKeyAuth() = default;
    // No keys: everything is allowed. `public_paths` (exact decoded paths) never need a key.
    ApiKeyAuth(std::vector<std::string> keys, std::vector<std::string> public_paths);

    bool enabled() const { return !keys_.empty(); }
    bool is_public(std::string_view path) const;
    // True if no key is configured, the path is public, or a configured key was presented.
    bool allows(std::string_view path, const Headers& headers) const;

  private:
    std::vector<std::string> keys_;
    std::vector<std::string> public_paths_;
};

}  // namespace server::http
