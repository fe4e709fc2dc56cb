#include "server/http/server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "server/http/connection.h"
#include "server/http/listener.h"
#include "server/http/server_core.h"

namespace server::http {

namespace asio = boost::asio;

struct Server::Runtime {
    std::unique_ptr<asio::io_context> ioc;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
    std::shared_ptr<detail::Listener> listener;
    std::vector<std::thread> threads;
    std::uint16_t port = 0;

    mutable std::mutex mu;
    std::condition_variable cv;
    enum class State { created, running, stopping, stopped } state = State::created;
};

Server::Server(ServerConfig config)
    : core_(std::make_shared<detail::ServerCore>(std::move(config))), rt_(std::make_unique<Runtime>()) {
    const ServerConfig& cfg = core_->config;
    if (cfg.ssl_key_file.empty() && cfg.ssl_cert_file.empty()) return;
    if (cfg.ssl_key_file.empty() || cfg.ssl_cert_file.empty())
        throw std::runtime_error("HTTPS needs both a private key and a certificate file");
#ifdef GGSERVE_TLS
    namespace ssl = boost::asio::ssl;
    auto tls = std::make_shared<ssl::context>(ssl::context::tls_server);
    tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                     ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    boost::system::error_code ec;
    tls->use_certificate_chain_file(cfg.ssl_cert_file, ec);
    if (ec) throw std::runtime_error("cannot load the certificate '" + cfg.ssl_cert_file + "': " + ec.message());
    tls->use_private_key_file(cfg.ssl_key_file, ssl::context::pem, ec);
    if (ec) throw std::runtime_error("cannot load the private key '" + cfg.ssl_key_file + "': " + ec.message());
    core_->tls = std::move(tls);
#else
    throw std::runtime_error("this build has no TLS support (OpenSSL was not found when it was configured)");
#endif
}

bool Server::has_tls() {
#ifdef GGSERVE_TLS
    return true;
#else
    return false;
#endif
}

Server::~Server() {
    stop(std::chrono::seconds(1));
}

void Server::route(std::string_view method, std::string_view pattern, Handler handler) {
    {
        std::lock_guard lock(rt_->mu);
        if (rt_->state != Runtime::State::created)
            throw std::logic_error("routes must be added before start()");
    }
    core_->router.add(method, pattern, std::move(handler));
}

std::vector<std::pair<std::string, std::string>> Server::routes() const { return core_->router.list(); }

void Server::fallback(Handler handler) {
    std::lock_guard lock(rt_->mu);
    if (rt_->state != Runtime::State::created) throw std::logic_error("the fallback must be set before start()");
    core_->policy.fallback = std::move(handler);
}

void Server::error_format(std::string path_prefix, ErrorFormatter format) {
    std::lock_guard lock(rt_->mu);
    if (rt_->state != Runtime::State::created)
        throw std::logic_error("error formats must be set before start()");
    core_->policy.error_formats.emplace_back(std::move(path_prefix), std::move(format));
}

static int io_thread_count(int requested) {
    if (requested > 0) return requested;
    int hw = static_cast<int>(std::thread::hardware_concurrency());
    return std::clamp(hw, 2, 16);
}

void Server::start() {
    std::lock_guard lock(rt_->mu);
    if (rt_->state != Runtime::State::created) throw std::logic_error("a server is started only once");
    const ServerConfig& cfg = core_->config;
    core_->policy.auth = ApiKeyAuth(cfg.api_keys, cfg.public_paths);
    core_->policy.cors = cfg.cors;
    core_->policy.path_prefix = cfg.api_prefix;

    rt_->ioc = std::make_unique<asio::io_context>();
    rt_->listener = std::make_shared<detail::Listener>(*rt_->ioc, core_);  // throws if it cannot bind
    rt_->port = rt_->listener->port();
    rt_->work.emplace(rt_->ioc->get_executor());
    rt_->listener->start();
    int n = io_thread_count(cfg.n_threads);
    for (int i = 0; i < n; ++i) {
        rt_->threads.emplace_back([ioc = rt_->ioc.get()] {
            // Handlers catch their own exceptions; this keeps a stray one from killing the loop silently.
            while (true) {
                try {
                    ioc->run();
                    return;
                } catch (const std::exception& e) {
                    spdlog::error("http: exception escaped an I/O handler: {}", e.what());
                }
            }
        });
    }
    rt_->state = Runtime::State::running;
    spdlog::info("http: listening on {}:{} ({} I/O threads)", cfg.host, rt_->port, n);
}

std::uint16_t Server::port() const {
    std::lock_guard lock(rt_->mu);
    return rt_->port;
}

void Server::stop(std::chrono::milliseconds grace) {
    {
        std::unique_lock lock(rt_->mu);
        if (rt_->state == Runtime::State::created) {
            rt_->state = Runtime::State::stopped;
            rt_->cv.notify_all();
            return;
        }
        if (rt_->state != Runtime::State::running) {
            rt_->cv.wait(lock, [&] { return rt_->state == Runtime::State::stopped; });
            return;
        }
        for (const auto& t : rt_->threads) {
            if (t.get_id() == std::this_thread::get_id())
                throw std::logic_error("stop() called from an I/O thread");
        }
        rt_->state = Runtime::State::stopping;
        core_->stopping = true;  // under the lock: once running() is false, new responses say "close"
    }

    rt_->listener->stop();
    for (const auto& c : core_->snapshot()) c->shutdown(false);
    if (!core_->wait_until_at_most(0, grace)) {
        for (const auto& c : core_->snapshot()) c->shutdown(true);
        core_->wait_until_at_most(0, std::chrono::seconds(1));
    }

    rt_->work.reset();
    rt_->ioc->stop();
    for (auto& t : rt_->threads) t.join();
    rt_->threads.clear();
    // Connections still registered hold exchanges that producers may use: fail them while the loop is
    // still alive, so no producer posts into a destroyed io_context.
    for (const auto& c : core_->snapshot()) c->abort_after_loop_stopped();
    rt_->listener.reset();
    rt_->ioc.reset();

    std::lock_guard lock(rt_->mu);
    rt_->state = Runtime::State::stopped;
    rt_->cv.notify_all();
    spdlog::info("http: stopped");
}

void Server::wait() {
    std::unique_lock lock(rt_->mu);
    rt_->cv.wait(lock, [&] { return rt_->state == Runtime::State::stopped; });
}

bool Server::running() const {
    std::lock_guard lock(rt_->mu);
    return rt_->state == Runtime::State::running;
}

std::size_t Server::open_connections() const {
    return core_->count();
}

bool Server::wait_for_connections(std::size_t n, std::chrono::milliseconds timeout) const {
    return core_->wait_until_at_most(n, timeout);
}

const ServerConfig& Server::config() const {
    return core_->config;
}

}  // namespace server::http
