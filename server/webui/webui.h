// The chat UI at `/`: the bundle embedded in the binary (gzip when the client accepts it, ETag and
// Cache-Control, a Content-Security-Policy that allows only our own origin), or with --path DIR the
// files of a directory instead. Installed as the HTTP server's fallback for GET/HEAD requests that no
// API route matches, which needs no API key: the key protects the API, not the page.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "server/http/message.h"

namespace webui {

struct WebUiOptions {
    std::string path;  // --path DIR: serve this directory instead of the embedded UI
};

// The CSP of the embedded UI: scripts, styles and requests from our own origin only, no inline script.
inline constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; "
    "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

class WebUi {
  public:
    // Throws std::runtime_error when `path` is not a readable directory or the embedded bundle is corrupt.
    explicit WebUi(WebUiOptions options);

    // Answers a GET or HEAD request for a static file (404 for anything else).
    server::http::Reply handle(const server::http::Request& req) const;

    bool embedded() const { return root_.empty(); }
    // Bytes of the embedded bundle, gzip-compressed (0 when the build has no UI).
    std::size_t embedded_gzip_bytes() const { return gzip_bytes_; }

  private:
    struct File {
        std::string content_type;
        std::string gzip, plain;
        std::string etag;
        bool immutable = false;  // content-hashed name: cached for a year
    };

    server::http::Response serve_embedded(const server::http::Request& req) const;
    server::http::Response serve_directory(const server::http::Request& req) const;

    std::map<std::string, File, std::less<>> files_;
    std::filesystem::path root_;  // canonical --path directory; empty: the embedded UI
    std::size_t gzip_bytes_ = 0;
};

}  // namespace webui
