// One client connection: reads requests one at a time (pipelined bytes wait in the buffer), dispatches
// them, writes responses and streams, enforces limits and timeouts. Everything runs on the socket's
// strand; async handles reach it through ExchangeState. Internal to the HTTP layer.
#pragma once

#include <atomic>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#ifdef GGSERVE_TLS
#include <boost/asio/ssl/stream.hpp>
#endif
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/http/exchange_state.h"
#include "server/http/message.h"
#include "server/http/request_reader.h"
#include "server/http/server_core.h"

namespace server::http::detail {

// The TCP endpoint a protocol-neutral one holds (an IPv4 or IPv6 address); nullopt for a UNIX socket's.
std::optional<boost::asio::ip::tcp::endpoint> tcp_endpoint_of(
    const boost::asio::generic::stream_protocol::endpoint& endpoint);

class Connection : public std::enable_shared_from_this<Connection> {
  public:
    // TCP, or a UNIX socket (--host PATH.sock): the protocol-neutral socket serves both.
    using Socket = boost::asio::generic::stream_protocol::socket;

    // `socket` must use a strand executor.
    Connection(Socket socket, std::shared_ptr<ServerCore> core);
    ~Connection();

    void start();
    // Thread-safe. graceful: close when idle, else after the exchange in progress; force: close now.
    void shutdown(bool force);
    // Only once no I/O thread runs: fails the exchange so producers stop posting to the loop.
    void abort_after_loop_stopped();

  private:
    enum class Phase { awaiting, busy, lingering, closed };
    enum class After { nothing, finish };

    // Reading and parsing.
    void begin_request();
    void parse_buffered();
    void read_some();
    void on_read(boost::system::error_code ec, std::size_t n);
    bool answer_half_closed();
    void probe_half_closed();
    // --sse-ping-interval: an SSE comment into an event stream that has been silent that long.
    void ping_if_silent();
    bool is_event_stream() const;
    void watch_for_reset();
    bool peer_reset();
    void arm_timer(std::chrono::milliseconds after);
    void on_timer();
    void fail_request(int status, const std::string& message);

    // Handling.
    void dispatch();
    std::shared_ptr<ExchangeState> make_exchange(ExchangeKind kind, const StreamOptions& options);
    void send_response(Response response);
    void write_stream_head();
    void pump();
    void finish_exchange();
    void finalize_headers(Headers& headers);

    // TLS: the handshake before the first request.
    void handshake();
    // The socket (inside the TLS stream when there is one).
    Socket& sock();

    // Writing and closing.
    void queue_write(std::string bytes, After after, std::size_t stream_bytes = 0);
    void write_next();
    void on_written(boost::system::error_code ec);
    void linger_close();
    void close_now();

    Socket socket_;  // moved into tls_ when serving HTTPS: use sock()
#ifdef GGSERVE_TLS
    std::unique_ptr<boost::asio::ssl::stream<Socket>> tls_;
#endif
    std::shared_ptr<ServerCore> core_;
    std::string remote_;
    boost::beast::flat_buffer buffer_;
    // A read in flight lands here, not in buffer_: parsing consumes buffer_ meanwhile, which may move its
    // storage, so bytes read straight into a region prepare()d earlier could be committed in the wrong place.
    std::vector<char> read_chunk_;
    RequestReader reader_;
    boost::asio::steady_timer timer_;        // idle / read / linger deadline
    boost::asio::steady_timer write_timer_;  // deadline of the write in flight
    std::uint64_t timer_generation_ = 0;     // a fired timer whose generation is stale is ignored
    std::uint64_t write_generation_ = 0;

    Phase phase_ = Phase::awaiting;
    bool reading_ = false;
    bool keep_alive_ = true;
    bool stopping_ = false;
    bool started_as_stream_ = false;     // the handler called stream() (not a hand-off that streams later)
    bool half_closed_ = false;           // the client closed its sending side during this exchange
    bool head_queued_ = false;           // the exchange's response or stream head went to the write queue
    std::chrono::steady_clock::time_point last_queued_{};  // when bytes last went to the write queue
    std::uint64_t watch_generation_ = 0;  // a reset watch whose generation is stale is ignored

    // The exchange in progress.
    std::unique_ptr<Request> request_;
    std::atomic<bool> in_handler_{false};
    bool head_only_ = false;
    std::shared_ptr<ExchangeState> exchange_;
    StreamOptions stream_options_;
    bool chunked_ = true;

    struct PendingWrite {
        std::string bytes;
        After after;
        std::size_t stream_bytes;  // payload bytes of the stream queue this write carries
    };
    std::deque<PendingWrite> writes_;
    bool writing_ = false;
};

}  // namespace server::http::detail
