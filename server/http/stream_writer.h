// Handles through which a handler answers later, from any thread: a StreamWriter for a streamed (SSE)
// response and a DeferredResponse for one complete response. Both are thread-safe, never block, and
// report a client that went away (on_cancel callback, send/respond returning false).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "server/http/headers.h"
#include "server/http/response.h"

namespace server::http {

namespace detail {
class ExchangeState;
enum class ExchangeKind { stream, deferred };
}  // namespace detail

struct StreamOptions {
    int status = 200;
    std::string content_type = "text/event-stream";
    Headers headers;  // extra response headers
    // Bytes that may wait for the socket before the stream is failed; 0 = the server's default.
    std::size_t max_queued_bytes = 0;
};

class StreamWriter {
  public:
    explicit StreamWriter(std::shared_ptr<detail::ExchangeState> state);
    // Dropping the writer without close() aborts the response: the client sees a truncated stream.
    ~StreamWriter();
    StreamWriter(const StreamWriter&) = delete;
    StreamWriter& operator=(const StreamWriter&) = delete;

    // Queues one SSE event "data: <data>\n\n" (a multi-line payload becomes several data lines).
    // Returns false, without queuing, once the stream is cancelled, closed or its queue is full; a full
    // queue fails the stream (the cancel callback runs).
    bool send(std::string_view data);
    // "event: <event>\ndata: <data>\n\n".
    bool send_event(std::string_view event, std::string_view data);
    // Queues raw bytes as they are (comments such as ": ping\n\n", or a non-SSE stream).
    bool write(std::string bytes);
    // Ends the response once everything queued is written. Idempotent.
    void close();

    // Called exactly once, on an I/O thread, if the stream fails before close(): client disconnect,
    // write error or timeout, full queue, server stop. If it has already failed, `callback` runs now on
    // the calling thread. Do not block in it.
    void on_cancel(std::function<void()> callback);
    bool cancelled() const;

  private:
    std::shared_ptr<detail::ExchangeState> state_;
};

class DeferredResponse {
  public:
    explicit DeferredResponse(std::shared_ptr<detail::ExchangeState> state);
    // Dropping the handle without respond() answers 500, so a lost task never hangs the client.
    ~DeferredResponse();
    DeferredResponse(const DeferredResponse&) = delete;
    DeferredResponse& operator=(const DeferredResponse&) = delete;

    // Sends the response. Returns false if the client is gone or a response was already given.
    bool respond(Response response);
    // Answers with a stream instead (its head is written next): a proxy learns only from the upstream
    // answer whether it streams. nullptr if the client is gone or an answer was already given; this
    // handle must then not be used to respond.
    std::shared_ptr<StreamWriter> stream(StreamOptions options = {});
    // As StreamWriter::on_cancel: the client went away before respond().
    void on_cancel(std::function<void()> callback);
    bool cancelled() const;

  private:
    std::shared_ptr<detail::ExchangeState> state_;
};

}  // namespace server::http
