#include "server/http/message.h"

#include <atomic>
#include <stdexcept>

#include "server/http/exchange_state.h"

namespace server::http {

std::optional<std::string> Request::query_param(std::string_view name) const {
    for (const auto& [k, v] : query) {
        if (k == name) return v;
    }
    return std::nullopt;
}

const std::string& Request::path_param(std::string_view name) const {
    auto it = path_params.find(name);
    if (it == path_params.end()) throw std::out_of_range("no path parameter '" + std::string(name) + "'");
    return it->second;
}

std::shared_ptr<detail::ExchangeState> Request::start_exchange(detail::ExchangeKind kind,
                                                               const StreamOptions& options) {
    if (!factory_) throw std::logic_error("this request is not attached to a connection");
    if (async_started_) throw std::logic_error("stream() or defer() was already called for this request");
    async_started_ = true;
    return factory_(kind, options);
}

std::shared_ptr<StreamWriter> Request::stream(StreamOptions options) {
    return std::make_shared<StreamWriter>(start_exchange(detail::ExchangeKind::stream, options));
}

std::shared_ptr<DeferredResponse> Request::defer() {
    return std::make_shared<DeferredResponse>(
        start_exchange(detail::ExchangeKind::deferred, StreamOptions{}));
}

std::shared_ptr<Request> Request::hand_off() {
    // What answers the client until the copy goes async: a 500 if the copy is dropped first.
    struct Pending {
        std::shared_ptr<detail::ExchangeState> state;
        std::atomic<bool> used{false};
        ~Pending() {
            if (!used && state) state->abandon();
        }
    };
    auto pending = std::make_shared<Pending>();
    pending->state = start_exchange(detail::ExchangeKind::deferred, StreamOptions{});
    auto copy = std::make_shared<Request>();
    copy->method = method;
    copy->target = target;
    copy->path = path;
    copy->query_string = query_string;
    copy->query = query;
    copy->path_params = path_params;
    copy->headers = headers;
    copy->body = std::move(body);
    copy->version = version;
    copy->remote_address = remote_address;
    copy->factory_ = [pending](detail::ExchangeKind kind,
                               const StreamOptions& options) -> std::shared_ptr<detail::ExchangeState> {
        pending->used = true;
        if (kind == detail::ExchangeKind::stream) pending->state->start_stream(options);
        return pending->state;
    };
    return copy;
}

}  // namespace server::http
