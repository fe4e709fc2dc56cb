#include "server/http/auth.h"

#include <algorithm>

namespace server::http {

std::optional<std::string_view> presented_api_key(const Headers& headers) {
    if (auto auth = headers.get("Authorization"); auth && !auth->empty()) {
        std::string_view v = *auth;
        if (v.size() >= 7 && iequals(v.substr(0, 7), "Bearer ")) v.remove_prefix(7);
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        return v;
    }
    if (auto key = headers.get("X-Api-Key"); key && !key->empty()) return *key;
    return std::nullopt;
}

// Compares in time independent of where the strings differ, so response timing leaks nothing of a key.
static bool constant_time_equal(std::string_view a, std::string_view b) {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff |= static_cast<unsigned char>(a[i] ^ (b.empty() ? 0 : b[i % b.size()]));
    }
    return diff == 0;
}

ApiKeyAuth::ApiKeyAuth(std::vector<std::string> keys, std::vector<std::string> public_paths)
    : keys_(std::move(keys)), public_paths_(std::move(public_paths)) {
    std::erase_if(keys_, [](const std::string& k) { return k.empty(); });
}

bool ApiKeyAuth::is_public(std::string_view path) const {
    return std::find(public_paths_.begin(), public_paths_.end(), path) != public_paths_.end();
}

bool ApiKeyAuth::allows(std::string_view path, const Headers& headers) const {
    if (keys_.empty() || is_public(path)) return true;
    auto key = presented_api_key(headers);
    if (!key) return false;
    bool ok = false;
    for (const auto& k : keys_) ok |= constant_time_equal(*key, k);  // no early exit: same time for all keys
    return ok;
}

}  // namespace server::http
