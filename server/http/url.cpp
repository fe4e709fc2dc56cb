#include "server/http/url.h"

namespace server::http {

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '%') {
            if (i + 2 >= text.size()) return std::nullopt;
            int hi = hex_value(text[i + 1]);
            int lo = hex_value(text[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

std::string percent_encode(std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                          c == '-' || c == '.' || c == '_' || c == '~';
        if (unreserved) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

std::optional<TargetParts> split_target(std::string_view target) {
    if (target == "*") return TargetParts{"*", "*", ""};
    // absolute-form: drop "scheme://authority" (proxies send it; RFC 9112 says servers must accept it).
    for (std::string_view scheme : {"http://", "https://"}) {
        if (target.size() >= scheme.size() && target.substr(0, scheme.size()) == scheme) {
            std::size_t slash = target.find_first_of("/?", scheme.size());
            target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
            if (!target.empty() && target.front() == '?') return std::nullopt;
            break;
        }
    }
    if (target.empty() || target.front() != '/') return std::nullopt;
    std::size_t q = target.find('?');
    std::string_view raw_path = target.substr(0, q);
    if (raw_path.find('#') != std::string_view::npos) return std::nullopt;  // fragments are never sent
    auto decoded = percent_decode(raw_path);
    if (!decoded || decoded->find('\0') != std::string::npos) return std::nullopt;
    TargetParts parts;
    parts.raw_path = std::string(raw_path);
    parts.path = std::move(*decoded);
    if (q != std::string_view::npos) parts.query_string = std::string(target.substr(q + 1));
    return parts;
}

std::vector<std::pair<std::string, std::string>> parse_query(std::string_view query_string) {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t start = 0;
    while (start <= query_string.size()) {
        std::size_t end = query_string.find('&', start);
        if (end == std::string_view::npos) end = query_string.size();
        std::string_view item = query_string.substr(start, end - start);
        if (!item.empty()) {
            std::size_t eq = item.find('=');
            std::string_view key = item.substr(0, eq);
            std::string_view value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
            out.emplace_back(percent_decode(key, true).value_or(std::string(key)),
                             percent_decode(value, true).value_or(std::string(value)));
        }
        start = end + 1;
    }
    return out;
}

}  // namespace server::http
