#include "server/http/wire.h"

#include <cstdio>

namespace server::http {

std::string_view reason_phrase(int status) {
    switch (status) {
        case 100:
            return "Continue";
        case 200:
            return "OK";
        case 201:
            return "Created";
        case 202:
            return "Accepted";
        case 204:
            return "No Content";
        case 206:
            return "Partial Content";
        case 301:
            return "Moved Permanently";
        case 302:
            return "Found";
        case 304:
            return "Not Modified";
        case 307:
            return "Temporary Redirect";
        case 308:
            return "Permanent Redirect";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 408:
            return "Request Timeout";
        case 409:
            return "Conflict";
        case 411:
            return "Length Required";
        case 413:
            return "Payload Too Large";
        case 414:
            return "URI Too Long";
        case 415:
            return "Unsupported Media Type";
        case 422:
            return "Unprocessable Entity";
        case 429:
            return "Too Many Requests";
        case 431:
            return "Request Header Fields Too Large";
        case 500:
            return "Internal Server Error";
        case 501:
            return "Not Implemented";
        case 502:
            return "Bad Gateway";
        case 503:
            return "Service Unavailable";
        case 504:
            return "Gateway Timeout";
        case 505:
            return "HTTP Version Not Supported";
        default:
            return "Unknown";
    }
}

bool status_allows_body(int status) {
    return !(status < 200 || status == 204 || status == 304);
}

static void append_sanitized(std::string& out, std::string_view text) {
    for (char c : text) out += (c == '\r' || c == '\n') ? ' ' : c;
}

std::string serialize_head(int status, const Headers& headers) {
    std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
    out += reason_phrase(status);
    out += "\r\n";
    for (const auto& [name, value] : headers) {
        append_sanitized(out, name);
        out += ": ";
        append_sanitized(out, value);
        out += "\r\n";
    }
    out += "\r\n";
    return out;
}

std::string frame_chunk(std::string_view data) {
    char size[24];
    int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    std::string out;
    out.reserve(static_cast<std::size_t>(n) + data.size() + 2);
    out.append(size, static_cast<std::size_t>(n));
    out += data;
    out += "\r\n";
    return out;
}

}  // namespace server::http
