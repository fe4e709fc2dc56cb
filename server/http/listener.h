// Accepts connections on the bound socket and hands each to a Connection on its own strand.
// Internal to the HTTP layer.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <memory>

#include "server/http/server_core.h"

namespace server::http::detail {

class Listener : public std::enable_shared_from_this<Listener> {
  public:
    // Binds and listens at once; throws std::runtime_error when it cannot. A host ending in ".sock" is a
    // UNIX socket at that path (llama-server's form); port() is then 0.
    Listener(boost::asio::io_context& ioc, std::shared_ptr<ServerCore> core);

    std::uint16_t port() const { return port_; }
    void start();
    void stop();  // thread-safe: closes the listening socket

  private:
    void accept();
    void reject_busy(boost::asio::generic::stream_protocol::socket socket);
    void listen_tcp();
    void listen_unix(const std::string& path);

    boost::asio::io_context& ioc_;
    std::shared_ptr<ServerCore> core_;
    boost::asio::strand<boost::asio::io_context::executor_type> strand_;
    boost::asio::basic_socket_acceptor<boost::asio::generic::stream_protocol> acceptor_;  // TCP or UNIX
    boost::asio::steady_timer retry_timer_;
    std::uint16_t port_ = 0;
    std::string unix_path_;  // the UNIX socket's file, removed at stop
};

}  // namespace server::http::detail
