// The HTTP/1.1 server: an Asio event loop on n_threads I/O threads, keep-alive connections handled one
// request at a time (pipelining-safe), limits and timeouts, routing, CORS, API keys, SSE streaming.
// Handlers run on the I/O threads and must not block: they return a Response, or start a stream /
// defer the response and return at once (see message.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http/errors.h"
#include "server/http/message.h"
#include "server/http/server_config.h"

namespace server::http {

namespace detail {
struct ServerCore;
}

class Server {
  public:
    // Throws std::runtime_error when the TLS key or certificate cannot be loaded.
    explicit Server(ServerConfig config = {});
    // Whether this build can serve HTTPS (it was built with OpenSSL).
    static bool has_tls();
    ~Server();  // stop() with a short grace period
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Routes are registered before start(); afterwards this throws std::logic_error.
    void route(std::string_view method, std::string_view pattern, Handler handler);
    void get(std::string_view pattern, Handler handler) { route("GET", pattern, std::move(handler)); }
    void post(std::string_view pattern, Handler handler) { route("POST", pattern, std::move(handler)); }
    void del(std::string_view pattern, Handler handler) { route("DELETE", pattern, std::move(handler)); }
    // (method, pattern) of every route registered so far, in order.
    std::vector<std::pair<std::string, std::string>> routes() const;
    // The handler of GET/HEAD requests that no route matches (static files); it needs no API key.
    // Set before start(), like routes.
    void fallback(Handler handler);
    // Errors on `path_prefix` (the path itself and paths below it) in an API's own shape, built by
    // `format`, from routing, authentication and handler failures alike. Set before start().
    void error_format(std::string path_prefix, ErrorFormatter format);

    // Binds host:port, listens and starts the I/O threads. Throws std::runtime_error if it cannot bind.
    // A server is started at most once.
    void start();
    // The bound port (the ephemeral one when config.port was 0); 0 before start().
    std::uint16_t port() const;

    // Stops accepting, lets requests in flight finish for up to `grace` (idle keep-alive connections close
    // at once), then closes what is left (their cancel callbacks run) and joins the I/O threads.
    // Idempotent; safe from any thread but an I/O thread.
    void stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
    // Blocks until stop() has completed.
    void wait();
    bool running() const;

    // Open TCP connections (for /metrics and for tests).
    std::size_t open_connections() const;
    // Blocks until open_connections() <= n or `timeout` passes; returns whether it got there.
    bool wait_for_connections(std::size_t n, std::chrono::milliseconds timeout) const;

    const ServerConfig& config() const;

  private:
    std::shared_ptr<detail::ServerCore> core_;
    struct Runtime;
    std::unique_ptr<Runtime> rt_;
};

}  // namespace server::http
