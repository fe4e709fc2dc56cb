// Settings of the HTTP server (llama-server: --host, --port, --threads-http, --timeout, --api-key).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/http/cors.h"

namespace server::http {

// A host ending in ".sock" names a UNIX socket to listen on (llama-server's form), not an address.
inline bool is_unix_socket_path(const std::string& host) {
    return host.size() > 5 && host.compare(host.size() - 5, 5, ".sock") == 0;
}

struct ServerConfig {
    std::string host = "127.0.0.1";  // an address, or a UNIX socket's path ending in ".sock"
    std::uint16_t port = 8080;  // 0 = an ephemeral port, see Server::port()
    int n_threads = 0;          // I/O threads; <= 0: one per hardware thread (at least 2)
    bool reuse_port = false;    // SO_REUSEPORT on the listening socket (llama-server's --reuse-port)
    // Every route (API and web UI) is served under this prefix ("/llm": /llm/health ...) and nothing
    // outside it (llama-server's --api-prefix); "" = at the root. Starts with '/', no trailing '/'.
    std::string api_prefix;

    std::size_t max_header_bytes = 64 * 1024;        // request line + headers, else 431
    std::size_t max_body_bytes = 100 * 1024 * 1024;  // else 413
    std::size_t max_connections = 0;                 // 0 = unlimited; beyond it new clients get 503

    // From the first byte of a request until it is complete (408 if it expires).
    std::chrono::milliseconds read_timeout{std::chrono::seconds(600)};
    // One socket write (a response or a batch of stream events); a client that stops reading is dropped.
    std::chrono::milliseconds write_timeout{std::chrono::seconds(600)};
    // A keep-alive connection waiting for its next request.
    std::chrono::milliseconds idle_timeout{std::chrono::seconds(60)};

    // Stream bytes queued for a slow client before its stream is failed (StreamOptions can override); the
    // stream's cancel callback runs at once, even while a write is pending.
    std::size_t stream_queue_bytes = 8 * 1024 * 1024;
    // One write of a stream (its events once the socket buffers are full) that makes no progress for this
    // long fails the stream, cancelling its generation (a client that stops reading frees its slot).
    std::chrono::milliseconds stream_stall_timeout{std::chrono::seconds(30)};
    // An SSE comment (": ping") into an event stream that has sent nothing for this long (llama-server's
    // --sse-ping-interval, default 30 s); 0 = never.
    std::chrono::milliseconds sse_ping_interval{std::chrono::seconds(30)};

    std::vector<std::string> api_keys;  // empty: no authentication
    // As llama-server: health and the model list need no key.
    std::vector<std::string> public_paths = {"/", "/health", "/v1/health", "/models", "/v1/models"};
    CorsPolicy cors;  // --cors-*: the CORS answers (cors.enabled = false: none)
    std::string server_name = "ggserve";  // Server header; empty: none

    // HTTPS: a PEM private key and certificate chain (both, or neither for plain HTTP). Needs a build
    // with OpenSSL (Server::has_tls()).
    std::string ssl_key_file;
    std::string ssl_cert_file;
};

// Where a server listens, for its log: "http://HOST:PORT", or "http+unix://PATH" for a UNIX socket.
inline std::string listen_url(const ServerConfig& c, std::uint16_t port) {
    const std::string scheme = c.ssl_key_file.empty() ? "http" : "https";
    if (is_unix_socket_path(c.host)) return scheme + "+unix://" + c.host;
    return scheme + "://" + c.host + ":" + std::to_string(port);
}

}  // namespace server::http
