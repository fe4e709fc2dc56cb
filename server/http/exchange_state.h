// The shared state between an async handle (StreamWriter / DeferredResponse, used from any thread) and
// the connection that writes it (on its strand). Internal to the HTTP layer.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/http/response.h"
#include "server/http/stream_writer.h"

namespace server::http::detail {

class ExchangeState {
  public:
    // `notify` asks the connection to call take(); it is called with the lock held, at most once until
    // the next take() (except once more when the queue overflows), and never after fail().
    ExchangeState(ExchangeKind kind, std::size_t max_queued_bytes, std::function<void()> notify);

    // A deferred exchange turns into a stream when start_stream() succeeds.
    ExchangeKind kind() const;

    // Producer side, any thread.
    // Turns a deferred exchange that has not been answered into a stream with these options (its head is
    // written next). False if it is not deferred, already answered, failed or abandoned.
    bool start_stream(const StreamOptions& options);
    bool push(std::string bytes);
    void finish();
    bool respond(Response response);
    void abandon();
    void set_cancel(std::function<void()> callback);
    bool failed() const;
    // The queue limit was hit: the connection must drop the exchange even while a write is pending.
    bool overflowed() const;

    // Connection side, on its strand.
    struct Batch {
        ExchangeKind kind = ExchangeKind::deferred;  // at the time of take()
        std::optional<StreamOptions> stream_head;   // start_stream() was called: write this head first
        std::vector<std::string> chunks;
        std::size_t bytes = 0;
        bool finished = false;   // nothing more will be queued after these chunks
        bool abandoned = false;  // the handle was dropped without finishing
        bool overflow = false;   // the queue limit was hit: the exchange must be failed
        std::optional<Response> response;
    };
    Batch take();
    // `bytes` of a taken batch reached the socket: they no longer count against the queue limit.
    void written(std::size_t bytes);
    // The exchange cannot complete. Runs the cancel callback (once, on this thread) unless the producer
    // had already finished.
    void fail();

  private:
    void notify_locked();

    const std::function<void()> notify_;

    mutable std::mutex mu_;
    ExchangeKind kind_;
    std::size_t max_queued_bytes_;
    std::optional<StreamOptions> stream_head_;
    std::deque<std::string> queue_;
    std::size_t queued_bytes_ = 0;  // queued plus taken but not yet written
    std::optional<Response> response_;
    std::function<void()> cancel_;
    bool notify_pending_ = false;
    bool finished_ = false;
    bool abandoned_ = false;
    bool overflow_ = false;
    bool failed_ = false;
    bool cancel_fired_ = false;
};

}  // namespace server::http::detail
