// State shared by the Server, its listener and every connection: configuration, routes, the stop flag
// and the registry of open connections. Internal to the HTTP layer.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#ifdef GGSERVE_TLS
#include <boost/asio/ssl/context.hpp>
#endif

#include "server/http/dispatch.h"
#include "server/http/router.h"
#include "server/http/server_config.h"

namespace server::http::detail {

class Connection;

struct ServerCore {
    explicit ServerCore(ServerConfig c) : config(std::move(c)) {}

    ServerConfig config;
    Router router;
    DispatchPolicy policy;
    std::atomic<bool> stopping{false};
#ifdef GGSERVE_TLS
    std::shared_ptr<boost::asio::ssl::context> tls;  // HTTPS when set
#endif

    void add(Connection* c, std::weak_ptr<Connection> weak);
    void remove(Connection* c);
    std::size_t count() const;
    bool wait_until_at_most(std::size_t n, std::chrono::milliseconds timeout) const;
    std::vector<std::shared_ptr<Connection>> snapshot() const;

  private:
    mutable std::mutex mu_;
    mutable std::condition_variable cv_;
    std::unordered_map<Connection*, std::weak_ptr<Connection>> connections_;
};

}  // namespace server::http::detail
