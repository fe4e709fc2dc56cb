#include "server/http/listener.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <stdexcept>

#include "server/http/connection.h"
#include "server/http/errors.h"
#include "server/http/wire.h"

namespace server::http::detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using stream = asio::generic::stream_protocol;
using error_code = boost::system::error_code;

namespace {
using ReusePort = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
}  // namespace

Listener::Listener(asio::io_context& ioc, std::shared_ptr<ServerCore> core)
    : ioc_(ioc),
      core_(std::move(core)),
      strand_(asio::make_strand(ioc)),
      acceptor_(strand_),
      retry_timer_(strand_) {
    const std::string& host = core_->config.host;
    if (is_unix_socket_path(host))
        listen_unix(host);
    else
        listen_tcp();
}

void Listener::listen_tcp() {
    const auto& cfg = core_->config;
    tcp::resolver resolver(ioc_);
    error_code ec;
    auto endpoints = resolver.resolve(cfg.host, std::to_string(cfg.port), tcp::resolver::passive, ec);
    if (ec) throw std::runtime_error("cannot resolve host '" + cfg.host + "': " + ec.message());
    std::string last_error = "no address";
    for (const auto& entry : endpoints) {
        const stream::endpoint ep(entry.endpoint());
        error_code e;
        acceptor_.open(ep.protocol(), e);
        if (!e) acceptor_.set_option(asio::socket_base::reuse_address(true), e);
        // --reuse-port: several servers share the port; the kernel spreads new connections over them.
        if (!e && cfg.reuse_port) acceptor_.set_option(ReusePort(true), e);
        if (!e) acceptor_.bind(ep, e);
        if (!e) acceptor_.listen(asio::socket_base::max_listen_connections, e);
        if (!e) {
            // The port the kernel chose (--port 0), read back from the bound address.
            const auto bound = tcp_endpoint_of(acceptor_.local_endpoint(e));
            if (!e && bound) port_ = bound->port();
            return;
        }
        last_error = e.message();
        error_code ignored;
        acceptor_.close(ignored);
    }
    throw std::runtime_error("cannot listen on " + cfg.host + ":" + std::to_string(cfg.port) + ": " +
                             last_error);
}

void Listener::listen_unix(const std::string& path) {
    // A socket left by a server that is gone is replaced; any other file at the path is not touched.
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) throw std::runtime_error("cannot listen on " + path + ": a file that is not a socket is there");
        ::unlink(path.c_str());
    }
    const stream::endpoint ep{asio::local::stream_protocol::endpoint(path)};
    error_code e;
    acceptor_.open(ep.protocol(), e);
    if (!e) acceptor_.bind(ep, e);
    if (!e) acceptor_.listen(asio::socket_base::max_listen_connections, e);
    if (e) throw std::runtime_error("cannot listen on " + path + ": " + e.message());
    unix_path_ = path;
}

void Listener::start() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->accept(); });
}

void Listener::stop() {
    // The socket's file goes now, not in the posted close: the loop may stop before that runs.
    if (!unix_path_.empty()) ::unlink(unix_path_.c_str());
    asio::post(strand_, [self = shared_from_this()] {
        error_code ec;
        self->acceptor_.close(ec);
        self->retry_timer_.cancel();
    });
}

void Listener::accept() {
    acceptor_.async_accept(asio::make_strand(ioc_),
                           [self = shared_from_this()](error_code ec, stream::socket socket) {
                               if (!self->acceptor_.is_open()) return;
                               if (ec) {
                                   // Typically EMFILE: back off instead of spinning on a full descriptor
                                   // table.
                                   spdlog::warn("http: accept failed: {}", ec.message());
                                   self->retry_timer_.expires_after(std::chrono::milliseconds(100));
                                   self->retry_timer_.async_wait([self](error_code e) {
                                       if (!e) self->accept();
                                   });
                                   return;
                               }
                               const std::size_t max = self->core_->config.max_connections;
                               if (max > 0 && self->core_->count() >= max) {
                                   self->reject_busy(std::move(socket));
                               } else {
                                   std::make_shared<Connection>(std::move(socket), self->core_)->start();
                               }
                               self->accept();
                           });
}

void Listener::reject_busy(stream::socket socket) {
    Response r = error_response(503, "too many connections");
    Headers headers = std::move(r.headers);
    headers.set("Content-Length", std::to_string(r.body.size()));
    headers.set("Connection", "close");
    auto text = std::make_shared<std::string>(serialize_head(503, headers) + r.body);
    auto sock = std::make_shared<stream::socket>(std::move(socket));
    asio::async_write(*sock, asio::buffer(*text), [sock, text](error_code, std::size_t) {
        error_code ignored;
        sock->shutdown(stream::socket::shutdown_both, ignored);
        sock->close(ignored);
    });
}

}  // namespace server::http::detail
