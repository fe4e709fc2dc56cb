// Typed access to request-body fields: a present field of the wrong type is a 400, never ignored.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "server/http/errors.h"

namespace api {

using json = nlohmann::json;

[[noreturn]] inline void bad_request(const std::string& message) { throw server::http::HttpError(400, message); }

// A member that is present and not null, for either JSON flavour (the agent APIs keep the client's key
// order with ordered_json); nullptr otherwise.
template <typename Json>
const Json* present(const Json& body, const char* name) {
    auto it = body.find(name);
    if (it == body.end() || it->is_null()) return nullptr;
    return &*it;
}

// A string member's text; empty when it is absent or not a string.
template <typename Json>
std::string string_or_empty(const Json& body, const char* name) {
    const Json* v = present(body, name);
    return v && v->is_string() ? v->template get<std::string>() : std::string();
}

inline const json* field(const json& body, const char* name) { return present(body, name); }

template <typename T>
std::optional<T> get_opt(const json& body, const char* name);

template <>
inline std::optional<bool> get_opt<bool>(const json& body, const char* name) {
    const json* f = field(body, name);
    if (!f) return std::nullopt;
    if (!f->is_boolean()) bad_request(std::string("'") + name + "' must be a boolean");
    return f->get<bool>();
}

template <>
inline std::optional<double> get_opt<double>(const json& body, const char* name) {
    const json* f = field(body, name);
    if (!f) return std::nullopt;
    if (!f->is_number()) bad_request(std::string("'") + name + "' must be a number");
    return f->get<double>();
}

template <>
inline std::optional<float> get_opt<float>(const json& body, const char* name) {
    auto v = get_opt<double>(body, name);
    if (!v) return std::nullopt;
    return (float)*v;
}

template <>
inline std::optional<int64_t> get_opt<int64_t>(const json& body, const char* name) {
    const json* f = field(body, name);
    if (!f) return std::nullopt;
    if (f->is_number_integer()) return f->get<int64_t>();
    if (f->is_number_float()) {
        // A whole number written as a float ("n_predict": 8.0). The range check comes first: converting a
        // double outside int64_t (1e300) is undefined.
        const double d = f->get<double>();
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == std::trunc(d)) return (int64_t)d;
    }
    bad_request(std::string("'") + name + "' must be an integer");
}

template <>
inline std::optional<int32_t> get_opt<int32_t>(const json& body, const char* name) {
    auto v = get_opt<int64_t>(body, name);
    if (!v) return std::nullopt;
    if (*v < INT32_MIN || *v > INT32_MAX) bad_request(std::string("'") + name + "' is out of range");
    return (int32_t)*v;
}

template <>
inline std::optional<std::string> get_opt<std::string>(const json& body, const char* name) {
    const json* f = field(body, name);
    if (!f) return std::nullopt;
    if (!f->is_string()) bad_request(std::string("'") + name + "' must be a string");
    return f->get<std::string>();
}

template <typename T>
void read_into(const json& body, const char* name, T& target) {
    if (auto v = get_opt<T>(body, name)) target = *v;
}

}  // namespace api
