// Response and item ids ("chatcmpl-...", "resp_...", "toolu_...") and creation times.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>

namespace api {

// `prefix` + `n` random letters and digits.
inline std::string random_id(const char* prefix, int n = 24) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char* alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::string id = prefix;
    for (int i = 0; i < n; ++i) id += alphabet[rng() % 62];
    return id;
}

inline int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace api
