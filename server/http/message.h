// Request and Reply: what handlers receive and return.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http/headers.h"
#include "server/http/response.h"
#include "server/http/stream_writer.h"

namespace server::http {

class Request {
  public:
    std::string method;                                      // as sent: "GET", "POST", ...
    std::string target;                                      // raw request-target: "/slots/0?action=save"
    std::string path;                                        // percent-decoded path: "/slots/0"
    std::string query_string;                                // raw text after '?'
    std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
    std::map<std::string, std::string, std::less<>> path_params;  // filled by the router
    Headers headers;
    std::string body;
    unsigned version = 11;       // 10 or 11
    std::string remote_address;  // "127.0.0.1:54321"

    // First value of query parameter `name`.
    std::optional<std::string> query_param(std::string_view name) const;
    // Value of `{name}` in the matched route pattern; throws std::out_of_range if the route has none.
    const std::string& path_param(std::string_view name) const;

    // Starts a streamed response (SSE by default). The handler then returns the writer (a Reply) and may
    // hand it to any thread. At most one of stream()/defer() per request; a second call throws.
    std::shared_ptr<StreamWriter> stream(StreamOptions options = {});
    // Defers the response: the handler returns the handle and someone answers it later from any thread.
    std::shared_ptr<DeferredResponse> defer();
    // Moves the rest of the handling to another thread: returns a copy of this request (the body moved
    // into it) on which stream() or defer() may then be called once, from any thread, to answer the
    // client; until then the client waits (a disconnect meanwhile shows as a cancelled writer or response).
    // If the copy is destroyed without either, the client gets 500. The handler returns Reply::handed_off().
    std::shared_ptr<Request> hand_off();
    bool is_async() const { return async_started_; }

    // Installed by the connection that received the request; requests built elsewhere (unit tests of a
    // handler) cannot go async, and stream()/defer() throw std::logic_error.
    using ExchangeFactory =
        std::function<std::shared_ptr<detail::ExchangeState>(detail::ExchangeKind, const StreamOptions&)>;
    void set_exchange_factory(ExchangeFactory factory) { factory_ = std::move(factory); }

  private:
    std::shared_ptr<detail::ExchangeState> start_exchange(detail::ExchangeKind kind,
                                                          const StreamOptions& options);

    ExchangeFactory factory_;
    bool async_started_ = false;
};

// What a handler returns: a complete Response, or the StreamWriter / DeferredResponse it started (the
// answer then comes later, from any thread).
class Reply {
  public:
    Reply(Response response) : response_(std::move(response)) {}  // NOLINT: implicit on purpose
    Reply(const std::shared_ptr<StreamWriter>&) {}                // NOLINT
    Reply(const std::shared_ptr<DeferredResponse>&) {}            // NOLINT
    // The request was handed off (Request::hand_off): the copy answers later.
    static Reply handed_off() { return Reply(std::shared_ptr<DeferredResponse>()); }

    bool is_async() const { return !response_.has_value(); }
    Response& response() { return *response_; }

  private:
    std::optional<Response> response_;
};

using Handler = std::function<Reply(Request&)>;

}  // namespace server::http
