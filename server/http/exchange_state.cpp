#include "server/http/exchange_state.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace server::http::detail {

// The callback runs on an I/O thread (or the caller's): an exception must not unwind into the loop.
static void run_cancel(const std::function<void()>& callback) {
    try {
        callback();
    } catch (const std::exception& e) {
        spdlog::error("http: cancel callback threw: {}", e.what());
    } catch (...) {
        spdlog::error("http: cancel callback threw");
    }
}

ExchangeState::ExchangeState(ExchangeKind kind, std::size_t max_queued_bytes, std::function<void()> notify)
    : notify_(std::move(notify)), kind_(kind), max_queued_bytes_(max_queued_bytes) {}

ExchangeKind ExchangeState::kind() const {
    std::lock_guard lock(mu_);
    return kind_;
}

bool ExchangeState::start_stream(const StreamOptions& options) {
    std::lock_guard lock(mu_);
    if (kind_ != ExchangeKind::deferred || failed_ || finished_ || abandoned_) return false;
    kind_ = ExchangeKind::stream;
    if (options.max_queued_bytes) max_queued_bytes_ = options.max_queued_bytes;
    stream_head_ = options;
    notify_locked();
    return true;
}

void ExchangeState::notify_locked() {
    if (failed_ || notify_pending_) return;
    notify_pending_ = true;
    notify_();
}

bool ExchangeState::push(std::string bytes) {
    std::unique_lock lock(mu_);
    if (kind_ != ExchangeKind::stream || failed_ || overflow_ || finished_ || abandoned_) return false;
    if (bytes.empty()) return true;  // an empty chunk would end a chunked body
    if (queued_bytes_ + bytes.size() > max_queued_bytes_) {
        // The client does not keep up: fail the stream rather than buffer without bound. The producer
        // is cancelled now (not when a pending write ends, which may be never), and the connection is
        // told even if a notification is already pending (it may be stuck behind that write).
        overflow_ = true;
        queue_.clear();
        std::function<void()> callback;
        if (cancel_ && !cancel_fired_) {
            cancel_fired_ = true;
            callback = std::move(cancel_);
            cancel_ = nullptr;
        }
        notify_pending_ = true;
        notify_();
        lock.unlock();
        if (callback) run_cancel(callback);
        return false;
    }
    queued_bytes_ += bytes.size();
    queue_.push_back(std::move(bytes));
    notify_locked();
    return true;
}

void ExchangeState::finish() {
    std::lock_guard lock(mu_);
    if (kind_ != ExchangeKind::stream || finished_ || abandoned_) return;
    finished_ = true;
    notify_locked();
}

bool ExchangeState::respond(Response response) {
    std::lock_guard lock(mu_);
    if (kind_ != ExchangeKind::deferred || failed_ || finished_ || abandoned_) return false;
    finished_ = true;
    response_ = std::move(response);
    notify_locked();
    return true;
}

void ExchangeState::abandon() {
    std::lock_guard lock(mu_);
    if (finished_ || abandoned_) return;
    abandoned_ = true;
    notify_locked();
}

void ExchangeState::set_cancel(std::function<void()> callback) {
    std::unique_lock lock(mu_);
    if (cancel_fired_) return;
    if ((failed_ || overflow_) && !finished_ && !abandoned_) {
        cancel_fired_ = true;
        lock.unlock();
        if (callback) run_cancel(callback);
        return;
    }
    cancel_ = std::move(callback);
}

bool ExchangeState::failed() const {
    std::lock_guard lock(mu_);
    return failed_ || overflow_;
}

bool ExchangeState::overflowed() const {
    std::lock_guard lock(mu_);
    return overflow_;
}

ExchangeState::Batch ExchangeState::take() {
    std::lock_guard lock(mu_);
    notify_pending_ = false;
    Batch batch;
    batch.kind = kind_;
    batch.stream_head = std::move(stream_head_);
    stream_head_.reset();
    batch.chunks.reserve(queue_.size());
    for (auto& chunk : queue_) {
        batch.bytes += chunk.size();
        batch.chunks.push_back(std::move(chunk));
    }
    queue_.clear();
    batch.finished = finished_;
    batch.abandoned = abandoned_;
    batch.overflow = overflow_;
    batch.response = std::move(response_);
    response_.reset();
    return batch;
}

void ExchangeState::written(std::size_t bytes) {
    std::lock_guard lock(mu_);
    queued_bytes_ -= std::min(bytes, queued_bytes_);
}

void ExchangeState::fail() {
    std::function<void()> callback;
    {
        std::lock_guard lock(mu_);
        if (failed_) return;
        failed_ = true;
        queue_.clear();
        response_.reset();
        if (cancel_ && !finished_ && !abandoned_ && !cancel_fired_) {
            cancel_fired_ = true;
            callback = std::move(cancel_);
        }
        cancel_ = nullptr;
    }
    if (callback) run_cancel(callback);
}

}  // namespace server::http::detail
