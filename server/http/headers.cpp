#include "server/http/headers.h"

#include <algorithm>

namespace server::http {

static char ascii_lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    }
    return true;
}

std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::optional<std::string_view> Headers::get(std::string_view name) const {
    for (const auto& [k, v] : fields_) {
        if (iequals(k, name)) return std::string_view(v);
    }
    return std::nullopt;
}

std::string Headers::value_or(std::string_view name, std::string_view fallback) const {
    return std::string(get(name).value_or(fallback));
}

void Headers::set(std::string_view name, std::string_view value) {
    remove(name);
    fields_.emplace_back(std::string(name), std::string(value));
}

void Headers::add(std::string_view name, std::string_view value) {
    fields_.emplace_back(std::string(name), std::string(value));
}

void Headers::remove(std::string_view name) {
    std::erase_if(fields_, [&](const Field& f) { return iequals(f.first, name); });
}

}  // namespace server::http
