#include "server/http/message.h"

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

}  // namespace server::http
