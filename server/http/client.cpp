#include "server/http/client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>

namespace server::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using steady = std::chrono::steady_clock;

nlohmann::json ClientResponse::json() const {
    return nlohmann::json::parse(body);
}

struct Client::Impl {
    std::string host;
    std::uint16_t port;
    ClientOptions options;
    asio::io_context ioc;
    tcp::socket socket{ioc};
    beast::flat_buffer buffer;
    bool connected = false;
    std::size_t opened = 0;
    std::atomic<bool> aborted{false};  // abort(): no further connection

    steady::time_point deadline() const { return steady::now() + options.timeout; }

    // Runs the private loop until the operation in flight sets `done`; on timeout the socket is closed.
    void run(const bool& done, steady::time_point until) {
        ioc.restart();
        while (!done) {
            if (ioc.run_one_until(until) == 0 && !done) {
                close();
                ioc.restart();
                ioc.run();  // completes the aborted operation
                throw ClientError("timed out after " + std::to_string(options.timeout.count()) + " ms");
            }
        }
    }

    void close() {
        error_code ignored;
        socket.shutdown(tcp::socket::shutdown_both, ignored);
        socket.close(ignored);
        connected = false;
        buffer.clear();
    }

    void connect() {
        close();
        if (aborted) throw ClientError("aborted");
        tcp::resolver resolver(ioc);
        error_code ec;
        auto endpoints = resolver.resolve(host, std::to_string(port), ec);
        if (ec) throw ClientError("cannot resolve " + host + ": " + ec.message());
        bool done = false;
        asio::async_connect(socket, endpoints, [&](error_code e, const tcp::endpoint&) {
            ec = e;
            done = true;
        });
        run(done, deadline());
        if (ec)
            throw ClientError("cannot connect to " + host + ":" + std::to_string(port) + ": " + ec.message());
        socket.set_option(tcp::no_delay(true), ec);
        connected = true;
        ++opened;
    }

    void write_all(std::string_view bytes) {
        if (!connected) connect();
        error_code ec;
        bool done = false;
        asio::async_write(socket, asio::buffer(bytes.data(), bytes.size()), [&](error_code e, std::size_t) {
            ec = e;
            done = true;
        });
        run(done, deadline());
        if (ec) {
            close();
            throw ClientError("write failed: " + ec.message());
        }
    }

    // Reads a response header into `parser`.
    template <class Parser>
    void read_header(Parser& parser) {
        error_code ec;
        bool done = false;
        bhttp::async_read_header(socket, buffer, parser, [&](error_code e, std::size_t) {
            ec = e;
            done = true;
        });
        run(done, deadline());
        if (ec) {
            close();
            throw ClientError("reading the response failed: " + ec.message());
        }
    }

    ClientResponse read_response(bool head_request, bool return_interim = false) {
        if (!connected) throw ClientError("not connected");
        while (true) {
            bhttp::response_parser<bhttp::string_body> parser;
            parser.header_limit(1024 * 1024);
            parser.body_limit(options.max_body_bytes);
            if (head_request) parser.skip(true);
            read_header(parser);
            bool interim = parser.get().result_int() / 100 == 1;  // 100 Continue and friends
            if (interim && !return_interim) continue;
            if (!interim && !parser.is_done()) {
                error_code ec;
                bool done = false;
                bhttp::async_read(socket, buffer, parser, [&](error_code e, std::size_t) {
                    ec = e;
                    done = true;
                });
                run(done, deadline());
                if (ec) {
                    close();
                    throw ClientError("reading the response body failed: " + ec.message());
                }
            }
            auto msg = parser.release();
            ClientResponse out;
            out.status = msg.result_int();
            for (const auto& field : msg) out.headers.add(field.name_string(), field.value());
            out.body = std::move(msg.body());
            if (!interim && !msg.keep_alive()) close();
            return out;
        }
    }

    std::string build_request(std::string_view method, std::string_view target, std::string_view body,
                              const Headers& headers) const {
        std::string out;
        out.reserve(256 + body.size());
        out.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
        if (!headers.contains("Host")) out += "Host: " + host + ":" + std::to_string(port) + "\r\n";
        if (!headers.contains("User-Agent")) out += "User-Agent: ggserve-client\r\n";
        for (const auto& [name, value] : headers) out.append(name).append(": ").append(value).append("\r\n");
        bool wants_body = !body.empty() || method == "POST" || method == "PUT" || method == "PATCH";
        if (wants_body && !headers.contains("Content-Length")) {
            out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
        }
        if (!body.empty() && !headers.contains("Content-Type")) out += "Content-Type: application/json\r\n";
        out += "\r\n";
        out.append(body);
        return out;
    }

    // Writes the request; a reused keep-alive connection the server has meanwhile closed gets one retry.
    template <class Read>
    auto send_with_retry(const std::string& request, Read&& read) {
        bool reused = connected;
        try {
            write_all(request);
            return read();
        } catch (const ClientError&) {
            if (!reused) throw;
        }
        connect();
        write_all(request);
        return read();
    }
};

Client::Client(std::string host, std::uint16_t port, ClientOptions options)
    : impl_(std::make_unique<Impl>()) {
    impl_->host = std::move(host);
    impl_->port = port;
    impl_->options = options;
}

Client::~Client() {
    impl_->close();
}

ClientResponse Client::request(std::string_view method, std::string_view target, std::string_view body,
                               const Headers& headers) {
    std::string req = impl_->build_request(method, target, body, headers);
    bool head = method == "HEAD";
    return impl_->send_with_retry(req, [&] { return impl_->read_response(head); });
}

StreamResult Client::stream(std::string_view method, std::string_view target, std::string_view body,
                            const Headers& headers, const EventCallback& on_event) {
    // relay() with the bytes parsed into events, or kept as the body when the answer is not an event stream.
    bool is_sse = false;
    SseParser sse;
    std::string text;
    std::size_t events = 0;
    StreamResult result = relay(
        method, target, body, headers,
        [&](int, const Headers& h) {
            is_sse = h.value_or("Content-Type").rfind("text/event-stream", 0) == 0;
            return true;
        },
        [&](std::string_view chunk) {
            if (!is_sse) {
                text += chunk;
                return true;
            }
            const auto received = steady::now();
            return sse.feed(chunk, [&](SseEvent& event) {
                event.received = received;
                ++events;
                return on_event(event);
            });
        });
    result.body = std::move(text);
    result.events = events;
    return result;
}

StreamResult Client::relay(std::string_view method, std::string_view target, std::string_view body,
                           const Headers& headers, const HeadCallback& on_head, const BodyCallback& on_body) {
    Impl& d = *impl_;
    std::optional<bhttp::response_parser<bhttp::string_body>> p;
    std::string req = d.build_request(method, target, body, headers);
    d.send_with_retry(req, [&] {
        p.emplace();
        p->header_limit(1024 * 1024);
        p->body_limit(boost::none);
        if (method == "HEAD") p->skip(true);
        d.read_header(*p);
        return 0;
    });
    auto& parser = *p;
    StreamResult result;
    result.status = parser.get().result_int();
    for (const auto& field : parser.get()) result.headers.add(field.name_string(), field.value());
    if (!on_head(result.status, result.headers)) {
        result.aborted = true;
        d.close();
        return result;
    }
    try {
        while (!parser.is_done()) {
            error_code ec;
            bool done = false;
            bhttp::async_read_some(d.socket, d.buffer, parser, [&](error_code e, std::size_t) {
                ec = e;
                done = true;
            });
            d.run(done, d.deadline());
            std::string& chunk = parser.get().body();
            if (!chunk.empty()) {
                const bool keep_going = on_body(chunk);
                chunk.clear();
                if (!keep_going) {
                    result.aborted = true;
                    d.close();
                    return result;
                }
            }
            if (ec) {
                result.error = d.aborted ? "aborted" : ec.message();
                d.close();
                return result;
            }
        }
    } catch (const ClientError& e) {
        result.error = e.what();
        return result;
    }
    result.complete = true;
    if (!parser.keep_alive()) d.close();
    return result;
}

void Client::abort() {
    Impl* d = impl_.get();
    d->aborted = true;
    // The socket belongs to the thread running the client's loop: close it there.
    asio::post(d->ioc, [d] {
        error_code ignored;
        d->socket.close(ignored);
        d->connected = false;
    });
}

void Client::send_raw(std::string_view bytes) {
    impl_->write_all(bytes);
}

ClientResponse Client::read_response(bool head_request, bool return_interim) {
    return impl_->read_response(head_request, return_interim);
}

std::string Client::read_until_closed() {
    Impl& d = *impl_;
    if (!d.connected) throw ClientError("not connected");
    std::string out(static_cast<const char*>(d.buffer.data().data()), d.buffer.size());
    d.buffer.clear();
    while (true) {
        char chunk[4096];
        error_code ec;
        std::size_t got = 0;
        bool done = false;
        d.socket.async_read_some(asio::buffer(chunk), [&](error_code e, std::size_t n) {
            ec = e;
            got = n;
            done = true;
        });
        d.run(done, d.deadline());
        out.append(chunk, got);
        if (ec) break;  // EOF or reset: the server closed
    }
    d.close();
    return out;
}

std::string Client::read_until(std::string_view marker) {
    Impl& d = *impl_;
    if (!d.connected) throw ClientError("not connected");
    std::string out(static_cast<const char*>(d.buffer.data().data()), d.buffer.size());
    d.buffer.clear();
    while (out.find(marker) == std::string::npos) {
        char chunk[4096];
        error_code ec;
        std::size_t got = 0;
        bool done = false;
        d.socket.async_read_some(asio::buffer(chunk), [&](error_code e, std::size_t n) {
            ec = e;
            got = n;
            done = true;
        });
        d.run(done, d.deadline());
        out.append(chunk, got);
        if (ec) throw ClientError("the connection ended before '" + std::string(marker) + "' arrived: " + ec.message());
    }
    return out;
}

void Client::shutdown_send() {
    error_code ignored;
    impl_->socket.shutdown(tcp::socket::shutdown_send, ignored);
}

void Client::close() {
    impl_->close();
}

bool Client::connected() const {
    return impl_->connected;
}

std::size_t Client::connections_opened() const {
    return impl_->opened;
}

}  // namespace server::http
