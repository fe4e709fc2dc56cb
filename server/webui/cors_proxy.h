// The chat UI's CORS proxy (llama-server's --ui-mcp-proxy): GET and POST /cors-proxy?url=TARGET send the
// request on to TARGET and pass the answer back as it arrives (an event stream chunk by chunk), so that a
// page can talk to MCP servers that send no CORS headers. Off by default: then both routes answer 403.
//
// What goes on: the method, the body, the headers the page wraps as `x-llama-server-proxy-header-NAME`
// (sent as NAME), and the request's own Content-Type and Accept unless wrapped ones replace them. The
// caller's Authorization (this server's API key, checked before the handler runs) never goes on.
// Bounds: connecting and each wait for upstream bytes end after `timeout`; a whole (non-stream) answer
// may hold `max_body_bytes`, a streamed one as much in total.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "server/http/detached_tasks.h"
#include "server/http/headers.h"
#include "server/http/message.h"

namespace server::http {
class Server;
}

namespace webui {

inline constexpr std::string_view kProxyHeaderPrefix = "x-llama-server-proxy-header-";

struct ProxyTarget {
    std::string scheme;  // "http" or "https"
    std::string host;    // a name, an IPv4 address or a bracketed IPv6 one
    std::uint16_t port = 0;
    std::string target;  // path and query, as the upstream request line takes them ("/" at least)
};

// Parses the ?url= value: http or https, a host, an optional port 1..65535, no user name or password.
// Throws server::http::HttpError 400 naming what is wrong.
ProxyTarget parse_proxy_target(std::string_view url);

// The headers sent upstream for a request carrying `in` (see the top of this file).
server::http::Headers proxy_request_headers(const server::http::Headers& in);
// The upstream answer's headers passed back: all but hop-by-hop and framing fields, Server, and CORS
// fields (this server's CORS answers for its own origin).
server::http::Headers proxy_response_headers(const server::http::Headers& in);

struct CorsProxyOptions {
    bool enabled = false;
    std::chrono::milliseconds timeout{std::chrono::seconds(600)};  // llama-server's: 10 minutes
    std::size_t max_body_bytes = std::size_t(64) << 20;
};

class CorsProxy {
  public:
    explicit CorsProxy(CorsProxyOptions options);
    // Waits (up to 10 s) for the requests still being relayed; they end once the server stops.
    ~CorsProxy();
    CorsProxy(const CorsProxy&) = delete;
    CorsProxy& operator=(const CorsProxy&) = delete;

    // GET and POST /cors-proxy: the proxy when enabled (with llama-server's startup warning), else 403.
    void register_routes(server::http::Server& http);

  private:
    server::http::Reply handle(server::http::Request& req);
    // Relays one request on its own thread (the upstream client blocks) and answers `out`.
    void relay(ProxyTarget to, std::string method, std::string body, server::http::Headers headers,
               const std::shared_ptr<server::http::DeferredResponse>& out) const;

    const CorsProxyOptions options_;
    server::http::DetachedTasks relays_{"cors-proxy"};  // waited for when the proxy goes away
};

}  // namespace webui
