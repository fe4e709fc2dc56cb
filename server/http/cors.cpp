#include "server/http/cors.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

namespace server::http {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// The comma-separated items of an option's value, trimmed. Empty items are an error.
std::vector<std::string_view> split_list(std::string_view option, std::string_view value) {
    std::vector<std::string_view> items;
    if (trim_ows(value).empty()) throw std::invalid_argument(std::string(option) + " must not be empty");
    for (;;) {
        const auto comma = value.find(',');
        const std::string_view item = trim_ows(value.substr(0, comma));
        if (item.empty())
            throw std::invalid_argument(std::string(option) + " '" + std::string(value) +
                                        "' has an empty item: separate the values with single commas");
        items.push_back(item);
        if (comma == std::string_view::npos) break;
        value.remove_prefix(comma + 1);
    }
    return items;
}

// An HTTP token (RFC 9110 tchar): method and header names.
bool is_token(std::string_view s) {
    static constexpr std::string_view extra = "!#$%&'*+-.^_`|~";
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || extra.find(c) != std::string_view::npos;
    });
}

// "*" or a list of tokens, normalized to "A, B, C".
std::string token_list(std::string_view option, std::string_view value, std::string_view what) {
    const auto items = split_list(option, value);
    if (items.size() == 1 && items[0] == "*") return "*";
    std::string out;
    for (std::string_view item : items) {
        if (item == "*")
            throw std::invalid_argument(std::string(option) + ": '*' stands for every " + std::string(what) +
                                        " and must be alone");
        if (!is_token(item))
            throw std::invalid_argument(std::string(option) + ": '" + std::string(item) + "' is not a valid " +
                                        std::string(what) + " name");
        if (!out.empty()) out += ", ";
        out += item;
    }
    return out;
}

struct OriginParts {
    std::string_view scheme, host, port;
};

// scheme "://" host [":" port], nothing else (an Origin header's serialization).
std::optional<OriginParts> parse_origin(std::string_view s) {
    const auto sep = s.find("://");
    if (sep == std::string_view::npos || sep == 0) return std::nullopt;
    OriginParts p;
    p.scheme = s.substr(0, sep);
    if (!std::isalpha(static_cast<unsigned char>(p.scheme[0])) ||
        !std::all_of(p.scheme.begin(), p.scheme.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
        }))
        return std::nullopt;
    std::string_view rest = s.substr(sep + 3);
    if (!rest.empty() && rest.front() == '[') {  // IPv6 literal
        const auto close = rest.find(']');
        if (close == std::string_view::npos || close == 1) return std::nullopt;
        p.host = rest.substr(0, close + 1);
        const std::string_view inside = rest.substr(1, close - 1);
        if (!std::all_of(inside.begin(), inside.end(), [](char c) {
                return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
            }))
            return std::nullopt;
        rest.remove_prefix(close + 1);
    } else {
        const auto colon = rest.find(':');
        p.host = rest.substr(0, colon);
        if (p.host.empty() || !std::all_of(p.host.begin(), p.host.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
            }))
            return std::nullopt;
        rest.remove_prefix(p.host.size());
    }
    if (!rest.empty()) {
        if (rest.front() != ':') return std::nullopt;
        p.port = rest.substr(1);
        if (p.port.empty() || p.port.size() > 5 ||
            !std::all_of(p.port.begin(), p.port.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
            std::stoi(std::string(p.port)) > 65535)
            return std::nullopt;
    }
    return p;
}

}  // namespace

bool is_localhost_origin(std::string_view origin) {
    const auto p = parse_origin(origin);
    if (!p || !(iequals(p->scheme, "http") || iequals(p->scheme, "https"))) return false;
    return iequals(p->host, "localhost") || p->host == "127.0.0.1" || p->host == "[::1]";
}

CorsPolicy CorsPolicy::from_options(std::string_view origins, std::string_view methods, std::string_view headers,
                                    bool credentials) {
    CorsPolicy p;
    p.credentials = credentials;
    const auto items = split_list("--cors-origins", origins);
    if (items.size() == 1 && items[0] == "*") {
        p.origins = Origins::any;
    } else if (items.size() == 1 && iequals(items[0], "localhost")) {
        p.origins = Origins::localhost;
    } else {
        p.origins = Origins::list;
        for (std::string_view item : items) {
            if (item == "*" || iequals(item, "localhost"))
                throw std::invalid_argument("--cors-origins: '" + std::string(item) +
                                            "' is a value of its own and cannot be part of a list of origins");
            if (!parse_origin(item))
                throw std::invalid_argument("--cors-origins: '" + std::string(item) +
                                            "' is not an origin: give scheme://host[:port], e.g. "
                                            "https://app.example or http://localhost:5173 (no path, no trailing '/')");
            p.allowed.push_back(lower(item));
        }
    }
    p.methods = token_list("--cors-methods", methods, "method");
    p.headers = token_list("--cors-headers", headers, "header");
    return p;
}

std::optional<std::string> CorsPolicy::allow_origin(std::optional<std::string_view> origin) const {
    const bool has_origin = origin && !origin->empty();
    switch (origins) {
        case Origins::any:
            // "*" cannot carry credentials in a browser: reflect the origin instead, as llama-server.
            if (credentials && has_origin) return std::string(*origin);
            return std::string("*");
        case Origins::localhost:
            if (has_origin && is_localhost_origin(*origin)) return std::string(*origin);
            return std::nullopt;
        case Origins::list:
            if (!has_origin) return std::nullopt;
            for (const auto& a : allowed)
                if (iequals(a, *origin)) return std::string(*origin);
            return std::nullopt;
    }
    return std::nullopt;
}

std::string CorsPolicy::origins_text() const {
    switch (origins) {
        case Origins::any: return "*";
        case Origins::localhost: return "localhost";
        case Origins::list: break;
    }
    std::string out;
    for (const auto& a : allowed) out += (out.empty() ? "" : ", ") + a;
    return out;
}

void add_cors_headers(const CorsPolicy& policy, const Headers& request_headers, Headers& response_headers) {
    if (!policy.enabled) return;
    if (policy.varies_by_origin()) {
        // Keep what the handler varies on (Accept-Encoding for static files); add Origin once.
        const std::string vary = response_headers.value_or("Vary");
        bool listed = false;
        for (std::string_view rest = vary; !rest.empty();) {
            const auto comma = rest.find(',');
            listed = listed || iequals(trim_ows(rest.substr(0, comma)), "Origin");
            rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        }
        if (!listed) response_headers.set("Vary", vary.empty() ? "Origin" : vary + ", Origin");
    }
    const auto allowed = policy.allow_origin(request_headers.get("Origin"));
    if (!allowed) return;
    response_headers.set("Access-Control-Allow-Origin", *allowed);
    if (policy.credentials && *allowed != "*") response_headers.set("Access-Control-Allow-Credentials", "true");
}

Response preflight_response(const CorsPolicy& policy, const Headers& request_headers) {
    Response r;
    r.status = 204;
    add_cors_headers(policy, request_headers, r.headers);
    // As llama-server, the preflight always says whether credentials are allowed.
    r.headers.set("Access-Control-Allow-Credentials",
                  policy.credentials && r.headers.value_or("Access-Control-Allow-Origin", "*") != "*" ? "true"
                                                                                                      : "false");
    r.headers.set("Access-Control-Allow-Methods", policy.methods);
    auto requested = request_headers.get("Access-Control-Request-Headers");
    r.headers.set("Access-Control-Allow-Headers",
                  policy.headers == "*" && requested && !requested->empty() ? std::string(*requested) : policy.headers);
    r.headers.set("Access-Control-Max-Age", "86400");
    return r;
}

}  // namespace server::http
