#include "server/http/connection.h"

#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "server/http/cors.h"
#include "server/http/errors.h"
#include "server/http/wire.h"

namespace server::http::detail {

namespace asio = boost::asio;
using error_code = boost::system::error_code;

std::optional<asio::ip::tcp::endpoint> tcp_endpoint_of(const asio::generic::stream_protocol::endpoint& ep) {
    const int family = ep.protocol().family();
    asio::ip::tcp::endpoint out;
    if ((family != AF_INET && family != AF_INET6) || ep.size() > out.capacity()) return std::nullopt;
    std::memcpy(out.data(), ep.data(), ep.size());
    out.resize(ep.size());
    return out;
}

// "address:port" of a TCP peer (whose socket also gets TCP_NODELAY: SSE events are small, no Nagle
// delay), "unix" for a UNIX socket's.
static std::string describe_peer(Connection::Socket& socket) {
    error_code ec;
    const auto ep = socket.remote_endpoint(ec);
    if (ec) return "";
    const auto tcp_ep = tcp_endpoint_of(ep);
    if (!tcp_ep) return "unix";
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
    return tcp_ep->address().to_string() + ":" + std::to_string(tcp_ep->port());
}

// After a final response on a connection we close, keep reading (and discarding) briefly so that unread
// request bytes do not make the kernel reset the connection before the client has read our answer.
static constexpr std::chrono::milliseconds kLingerTime{1000};
static constexpr std::size_t kReadChunk = 64 * 1024;
// How often a client that half-closed is probed while its answer is pending (answer_half_closed).
static constexpr std::chrono::milliseconds kProbeInterval{1000};

Connection::Connection(Socket socket, std::shared_ptr<ServerCore> core)
    : socket_(std::move(socket)),
      core_(std::move(core)),
      reader_(core_->config.max_header_bytes, core_->config.max_body_bytes),
      timer_(socket_.get_executor()),
      write_timer_(socket_.get_executor()) {
#ifdef GGSERVE_TLS
    if (core_->tls) tls_ = std::make_unique<asio::ssl::stream<Socket>>(std::move(socket_), *core_->tls);
#endif
}

Connection::Socket& Connection::sock() {
#ifdef GGSERVE_TLS
    if (tls_) return tls_->next_layer();
#endif
    return socket_;
}

void Connection::handshake() {
#ifdef GGSERVE_TLS
    // The handshake counts as reading the first request: the read timeout bounds it.
    arm_timer(core_->config.read_timeout);
    tls_->async_handshake(asio::ssl::stream_base::server, [self = shared_from_this()](error_code ec) {
        if (self->phase_ == Phase::closed) return;
        if (ec) {
            spdlog::debug("http: {} TLS handshake failed: {}", self->remote_, ec.message());
            return self->close_now();
        }
        self->begin_request();
    });
#endif
}

Connection::~Connection() {
    if (exchange_) exchange_->fail();
    core_->remove(this);
}

void Connection::start() {
    core_->add(this, weak_from_this());
    asio::dispatch(sock().get_executor(), [self = shared_from_this()] {
        self->remote_ = describe_peer(self->sock());
#ifdef GGSERVE_TLS
        if (self->tls_) return self->handshake();
#endif
        self->begin_request();
    });
}

void Connection::shutdown(bool force) {
    asio::post(sock().get_executor(), [self = shared_from_this(), force] {
        self->stopping_ = true;
        if (self->phase_ == Phase::closed) return;
        if (force || (self->phase_ == Phase::awaiting && !self->reader_.started())) {
            self->close_now();
        } else {
            self->keep_alive_ = false;
        }
    });
}

void Connection::abort_after_loop_stopped() {
    if (exchange_) std::exchange(exchange_, nullptr)->fail();
    phase_ = Phase::closed;
    error_code ec;
    sock().close(ec);
}

// ---- reading -------------------------------------------------------------------------------------

void Connection::begin_request() {
    phase_ = Phase::awaiting;
    reader_.reset();
    arm_timer(core_->config.idle_timeout);
    parse_buffered();
}

void Connection::parse_buffered() {
    if (phase_ != Phase::awaiting) return;
    const bool was_started = reader_.started();
    const RequestReader::Progress progress = reader_.parse(buffer_);
    if (!was_started && reader_.started()) arm_timer(core_->config.read_timeout);
    if (progress.send_continue) queue_write("HTTP/1.1 100 Continue\r\n\r\n", After::nothing);
    if (progress.error_status) return fail_request(progress.error_status, progress.error_message);
    if (progress.done) return dispatch();
    read_some();
}

// An error the HTTP layer itself answers; the connection closes after it (the request stream is unusable).
void Connection::fail_request(int status, const std::string& message) {
    ++timer_generation_;
    timer_.cancel();
    phase_ = Phase::busy;
    keep_alive_ = false;
    send_response(error_response(status, message));
}

void Connection::read_some() {
    if (reading_ || phase_ == Phase::closed) return;
    // While busy, bytes of a pipelined request wait in the buffer (bounded); the pending read is also how
    // a disconnect is noticed while a producer is silent.
    std::size_t limit = core_->config.max_header_bytes + kReadChunk;
    if (phase_ == Phase::lingering) buffer_.consume(buffer_.size());
    if (buffer_.size() >= limit) return;
    std::size_t n = std::min(kReadChunk, limit - buffer_.size());
    read_chunk_.resize(n);
    reading_ = true;
    auto on_read = [self = shared_from_this()](error_code ec, std::size_t got) { self->on_read(ec, got); };
#ifdef GGSERVE_TLS
    if (tls_) return tls_->async_read_some(asio::buffer(read_chunk_), std::move(on_read));
#endif
    socket_.async_read_some(asio::buffer(read_chunk_), std::move(on_read));
}

void Connection::on_read(error_code ec, std::size_t n) {
    reading_ = false;
    if (phase_ == Phase::closed) return;
    if (ec) {
        if (phase_ == Phase::busy && !exchange_) {
            // The client half-closed after its request: still deliver the response, then close.
            keep_alive_ = false;
            return;
        }
        if (phase_ == Phase::busy && ec == asio::error::eof && answer_half_closed()) return;
        if (phase_ == Phase::busy) spdlog::debug("http: {} disconnected during a response", remote_);
        return close_now();
    }
    buffer_.commit(asio::buffer_copy(buffer_.prepare(n), asio::buffer(read_chunk_.data(), n)));
    switch (phase_) {
        case Phase::awaiting:
            return parse_buffered();
        case Phase::busy:
            return read_some();
        case Phase::lingering:
            return read_some();
        case Phase::closed:
            return;
    }
}

// The client closed its sending side while its answer is pending. HTTP allows a half-close after the
// request (the client still reads), but a client that closed the whole socket, or went away, reads the
// same here: only a write tells them apart, since a closed socket answers data with a reset. So the client
// gets a harmless probe — an interim "100 Continue" before the response head, an SSE comment inside an
// event stream — repeated every kProbeInterval while nothing else is written (the client may close later),
// and the socket is watched for the reset, which fails the exchange (cancelling its generation) as any
// disconnect does. A half-closed client gets its answer, then the connection closes.
// False where no probe fits (HTTP/1.0 before the head, a stream that is not SSE): treated as a disconnect.
bool Connection::answer_half_closed() {
    keep_alive_ = false;
    if (!head_queued_ ? request_->version < 11 : !is_event_stream())
        return false;
    spdlog::debug("http: {} half-closed its connection: probing with writes", remote_);
    half_closed_ = true;
    watch_for_reset();
    probe_half_closed();
    return true;
}

void Connection::probe_half_closed() {
    if (phase_ != Phase::busy || !exchange_) return;
    // The end of the response is on its way already: nothing may follow it.
    if (std::any_of(writes_.begin(), writes_.end(), [](const PendingWrite& w) { return w.after == After::finish; }))
        return;
    // A pending write probes by itself (it fails on a reset).
    if (!writing_ && writes_.empty()) {
        if (!head_queued_) {
            queue_write("HTTP/1.1 100 Continue\r\n\r\n", After::nothing);
        } else {
            queue_write(chunked_ ? frame_chunk(": ping\n\n") : std::string(": ping\n\n"), After::nothing);
        }
    }
    arm_timer(kProbeInterval);
}

// llama-server's --sse-ping-interval: proxies and clients with read timeouts see a live stream while a
// request waits for a slot or a long prompt is evaluated. The timer runs from the stream head on; each
// expiry pings if nothing was queued for a whole interval, else waits for the rest of it.
void Connection::ping_if_silent() {
    const auto interval = core_->config.sse_ping_interval;
    if (phase_ != Phase::busy || !exchange_ || !head_queued_ || !is_event_stream() || interval.count() <= 0)
        return;
    if (std::any_of(writes_.begin(), writes_.end(), [](const PendingWrite& w) { return w.after == After::finish; }))
        return;
    const auto silent =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - last_queued_);
    if (silent < interval) return arm_timer(interval - silent);
    // A write still pending (a client that does not read) needs no ping: the stall timeout watches it.
    if (!writing_ && writes_.empty())
        queue_write(chunked_ ? frame_chunk(": ping\n\n") : std::string(": ping\n\n"), After::nothing);
    arm_timer(interval);
}

// Waits for the socket's error or hang-up (the reset a probe provokes from a closed client).
void Connection::watch_for_reset() {
    if (phase_ != Phase::busy) return;
    if (peer_reset()) return close_now();
    const std::uint64_t generation = ++watch_generation_;
    socket_.async_wait(Socket::wait_error, [self = shared_from_this(), generation](error_code ec) {
        if (ec || generation != self->watch_generation_ || self->phase_ != Phase::busy) return;
        if (self->peer_reset()) {
            spdlog::debug("http: {} disconnected during a response", self->remote_);
            return self->close_now();
        }
        self->watch_for_reset();  // woken by something else (out-of-band data): keep watching
    });
}

bool Connection::peer_reset() {
    pollfd p{};
    p.fd = socket_.native_handle();
    p.events = POLLIN | POLLRDHUP;
    return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP | POLLNVAL));
}

void Connection::arm_timer(std::chrono::milliseconds after) {
    std::uint64_t generation = ++timer_generation_;
    timer_.expires_after(after);
    timer_.async_wait([self = shared_from_this(), generation](error_code ec) {
        if (!ec && generation == self->timer_generation_) self->on_timer();
    });
}

void Connection::on_timer() {
    switch (phase_) {
        case Phase::awaiting:
            if (!reader_.started()) return close_now();  // idle keep-alive connection
            return fail_request(408, "timed out reading the request");
        case Phase::lingering:
            return close_now();
        case Phase::busy:
            if (half_closed_) return probe_half_closed();
            return ping_if_silent();
        case Phase::closed:
            return;
    }
}

// ---- handling ------------------------------------------------------------------------------------

void Connection::dispatch() {
    ++timer_generation_;
    timer_.cancel();
    phase_ = Phase::busy;

    RequestReader::Parsed parsed = reader_.take();
    request_ = std::move(parsed.request);
    request_->remote_address = remote_;
    keep_alive_ = keep_alive_ && parsed.keep_alive && !stopping_ && !core_->stopping;
    head_only_ = request_->method == "HEAD";
    if (!parsed.target_ok) return fail_request(400, "malformed request target");
    request_->set_exchange_factory(
        [weak = weak_from_this()](ExchangeKind kind,
                                  const StreamOptions& options) -> std::shared_ptr<ExchangeState> {
            auto self = weak.lock();
            if (!self || !self->in_handler_)
                throw std::logic_error("stream()/defer() must be called inside the handler");
            return self->make_exchange(kind, options);
        });

    in_handler_ = true;
    Reply reply = dispatch_request(core_->router, core_->policy, *request_, parsed.raw_path);
    in_handler_ = false;
    spdlog::debug("http: {} {} {}", remote_, request_->method, request_->target);

    if (!reply.is_async()) {
        // A handler that started a stream and then answered directly (or threw) kills the stream.
        if (exchange_) std::exchange(exchange_, nullptr)->fail();
        send_response(std::move(reply.response()));
    } else if (!exchange_) {
        send_response(error_response(500, "the handler produced no response"));
    } else if (started_as_stream_) {
        // (A handed-off exchange may have turned into a stream already: its head comes through pump().)
        write_stream_head();
    } else {
        pump();  // the handler may have answered already
    }
    read_some();
}

std::shared_ptr<ExchangeState> Connection::make_exchange(ExchangeKind kind, const StreamOptions& options) {
    std::size_t limit =
        options.max_queued_bytes ? options.max_queued_bytes : core_->config.stream_queue_bytes;
    // The state holds no executor (a strand must not outlive its io_context), only a weak reference.
    auto notify = [weak = weak_from_this()] {
        if (auto self = weak.lock()) {
            auto executor = self->sock().get_executor();
            asio::post(executor, [self = std::move(self)] { self->pump(); });
        }
    };
    exchange_ = std::make_shared<ExchangeState>(kind, limit, std::move(notify));
    started_as_stream_ = kind == ExchangeKind::stream;
    stream_options_ = options;
    return exchange_;
}

void Connection::finalize_headers(Headers& headers) {
    if (stopping_ || core_->stopping) keep_alive_ = false;  // the header and the close must agree
    headers.set("Connection", keep_alive_ ? "keep-alive" : "close");
    if (request_ && !headers.contains("Access-Control-Allow-Origin")) {
        add_cors_headers(core_->config.cors, request_->headers, headers);
    }
    if (!core_->config.server_name.empty() && !headers.contains("Server")) {
        headers.set("Server", core_->config.server_name);
    }
}

void Connection::send_response(Response response) {
    Headers headers = std::move(response.headers);
    // Framing is ours: a handler's Content-Length or Transfer-Encoding could desynchronize the client.
    headers.remove("Content-Length");
    headers.remove("Transfer-Encoding");
    headers.remove("Connection");
    bool body_allowed = status_allows_body(response.status);
    if (body_allowed) {
        headers.set("Content-Length", std::to_string(response.body.size()));
        if (!response.body.empty() && !headers.contains("Content-Type")) {
            headers.set("Content-Type", "text/plain; charset=utf-8");
        }
    }
    finalize_headers(headers);
    head_queued_ = true;
    std::string out = serialize_head(response.status, headers);
    if (body_allowed && !head_only_) out += response.body;
    queue_write(std::move(out), After::finish);
}

void Connection::write_stream_head() {
    Headers headers = stream_options_.headers;
    headers.set("Content-Type", stream_options_.content_type);
    headers.set("Cache-Control", "no-cache");
    headers.set("X-Accel-Buffering", "no");  // a reverse proxy (nginx) must not buffer the stream
    chunked_ = request_->version >= 11;
    if (chunked_) {
        headers.set("Transfer-Encoding", "chunked");
    } else {
        keep_alive_ = false;  // HTTP/1.0 has no chunking: the body ends when the connection closes
    }
    finalize_headers(headers);
    head_queued_ = true;
    if (head_only_) {
        std::exchange(exchange_, nullptr)->fail();
        return queue_write(serialize_head(stream_options_.status, headers), After::finish);
    }
    queue_write(serialize_head(stream_options_.status, headers), After::nothing);
    const auto ping = core_->config.sse_ping_interval;
    if (ping.count() > 0 && is_event_stream() && !half_closed_) arm_timer(ping);
}

bool Connection::is_event_stream() const {
    return stream_options_.content_type.rfind("text/event-stream", 0) == 0;
}

void Connection::pump() {
    if (phase_ != Phase::busy || !exchange_) return;
    // Checked before waiting for a pending write: that write may never end while the client is not reading.
    if (exchange_->overflowed()) {
        spdlog::info("http: {} dropped: the client does not read its stream fast enough", remote_);
        return close_now();
    }
    if (writing_ || !writes_.empty()) return;
    ExchangeState::Batch batch = exchange_->take();
    if (batch.stream_head) {
        // A handed-off request started its stream (ExchangeState::start_stream): the head goes first.
        stream_options_ = std::move(*batch.stream_head);
        write_stream_head();
        if (!exchange_) return;  // HEAD: the head alone, the stream is cancelled
    }
    if (batch.kind == ExchangeKind::deferred) {
        if (batch.response) {
            exchange_.reset();
            send_response(std::move(*batch.response));
        } else if (batch.abandoned) {
            exchange_.reset();
            send_response(error_response(500, "the request was dropped without a response"));
        }
        return;
    }
    if (batch.abandoned) return close_now();  // the producer vanished: the client sees a truncated body
    std::string out;
    for (const auto& chunk : batch.chunks) out += chunked_ ? frame_chunk(chunk) : chunk;
    if (batch.finished) {
        if (chunked_) out += kLastChunk;
        if (out.empty()) return finish_exchange();
        return queue_write(std::move(out), After::finish, batch.bytes);
    }
    if (!out.empty()) queue_write(std::move(out), After::nothing, batch.bytes);
}

void Connection::finish_exchange() {
    exchange_.reset();
    request_.reset();
    head_only_ = false;
    head_queued_ = false;
    half_closed_ = false;
    ++watch_generation_;
    if (!keep_alive_ || stopping_ || core_->stopping) return linger_close();
    begin_request();
}

// ---- writing and closing -------------------------------------------------------------------------

void Connection::queue_write(std::string bytes, After after, std::size_t stream_bytes) {
    last_queued_ = std::chrono::steady_clock::now();
    writes_.push_back({std::move(bytes), after, stream_bytes});
    write_next();
}

void Connection::write_next() {
    if (writing_ || writes_.empty() || phase_ == Phase::closed) return;
    writing_ = true;
    std::uint64_t generation = ++write_generation_;
    // A stream's write gets the (shorter) stall timeout: its producer holds a slot while it waits.
    const bool streaming = exchange_ && exchange_->kind() == ExchangeKind::stream;
    const auto limit =
        streaming ? std::min(core_->config.write_timeout, core_->config.stream_stall_timeout) : core_->config.write_timeout;
    write_timer_.expires_after(limit);
    write_timer_.async_wait([self = shared_from_this(), generation, streaming](error_code ec) {
        if (ec || generation != self->write_generation_ || self->phase_ == Phase::closed) return;
        spdlog::info("http: {} {} timed out", self->remote_, streaming ? "stream write" : "write");
        self->close_now();
    });
    auto on_written = [self = shared_from_this()](error_code ec, std::size_t) { self->on_written(ec); };
#ifdef GGSERVE_TLS
    if (tls_) return asio::async_write(*tls_, asio::buffer(writes_.front().bytes), std::move(on_written));
#endif
    asio::async_write(socket_, asio::buffer(writes_.front().bytes), std::move(on_written));
}

void Connection::on_written(error_code ec) {
    writing_ = false;
    ++write_generation_;
    write_timer_.cancel();
    if (phase_ == Phase::closed) return;
    PendingWrite done = std::move(writes_.front());
    writes_.pop_front();
    if (ec) {
        spdlog::debug("http: {} write failed: {}", remote_, ec.message());
        return close_now();
    }
    if (done.stream_bytes && exchange_) exchange_->written(done.stream_bytes);
    if (done.after == After::finish) return finish_exchange();
    if (!writes_.empty()) return write_next();
    pump();
}

void Connection::linger_close() {
#ifdef GGSERVE_TLS
    // A TLS stream cannot be half-closed under a pending read: the response is complete, close now.
    if (tls_) return close_now();
#endif
    phase_ = Phase::lingering;
    error_code ec;
    socket_.shutdown(Socket::shutdown_send, ec);
    arm_timer(kLingerTime);
    read_some();
}

void Connection::close_now() {
    if (phase_ == Phase::closed) return;
    phase_ = Phase::closed;
    ++timer_generation_;
    ++write_generation_;
    timer_.cancel();
    write_timer_.cancel();
    if (exchange_) std::exchange(exchange_, nullptr)->fail();  // runs the cancel callback
    error_code ec;
    sock().shutdown(Socket::shutdown_both, ec);
    sock().close(ec);
}

}  // namespace server::http::detail
