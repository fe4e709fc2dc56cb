// A synchronous HTTP/1.1 client with keep-alive, for tests and the load generator. Every network wait
// is bounded by options.timeout. A streaming mode delivers SSE events as they arrive (with their arrival
// time) and can abort mid-stream by closing the socket, which is how client disconnects are tested.
// Not thread-safe: use one Client per thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "server/http/headers.h"
#include "server/http/sse.h"

namespace server::http {

class ClientError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct ClientOptions {
    std::chrono::milliseconds timeout{std::chrono::seconds(30)};  // connect, each write, each read
    std::size_t max_body_bytes = 256 * 1024 * 1024;
};

struct ClientResponse {
    int status = 0;
    Headers headers;
    std::string body;

    nlohmann::json json() const;  // parses body; throws nlohmann::json::parse_error
};

struct StreamResult {
    int status = 0;
    Headers headers;
    std::string body;        // the body when the response is not an event stream (e.g. an error)
    std::size_t events = 0;  // events delivered to the callback
    bool aborted = false;    // the callback returned false and the connection was closed
    bool complete = false;   // the response ended properly (final chunk)
    std::string error;       // why it ended early, when neither aborted nor complete
};

class Client {
  public:
    Client(std::string host, std::uint16_t port, ClientOptions options = {});
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Sends a request and reads the whole response. A body gets Content-Type application/json unless
    // `headers` says otherwise. A stale keep-alive connection is retried once on a fresh one. Throws
    // ClientError on connection failures and timeouts.
    ClientResponse request(std::string_view method, std::string_view target, std::string_view body = {},
                           const Headers& headers = {});
    ClientResponse get(std::string_view target, const Headers& headers = {}) {
        return request("GET", target, {}, headers);
    }
    ClientResponse post(std::string_view target, std::string_view body, const Headers& headers = {}) {
        return request("POST", target, body, headers);
    }

    // Called for each SSE event as it arrives; return false to abort (the socket is closed at once).
    using EventCallback = std::function<bool(const SseEvent&)>;
    // Sends a request and reads an SSE response incrementally. Failures before the response header
    // throw ClientError; later ones end the stream with StreamResult::error.
    StreamResult stream(std::string_view method, std::string_view target, std::string_view body,
                        const Headers& headers, const EventCallback& on_event);

    // For a proxy: sends a request and passes the answer on as it arrives. `on_head` gets the status and
    // headers once they are in, then `on_body` each piece of the (de-chunked) body as it is read; either
    // returning false stops at once and closes the connection (StreamResult::aborted). Failures before
    // the head throw ClientError; later ones end with StreamResult::error. StreamResult::body stays empty.
    using HeadCallback = std::function<bool(int status, const Headers& headers)>;
    using BodyCallback = std::function<bool(std::string_view bytes)>;
    StreamResult relay(std::string_view method, std::string_view target, std::string_view body,
                       const Headers& headers, const HeadCallback& on_head, const BodyCallback& on_body);
    // Thread-safe: closes the connection from any thread, so that a request() / stream() / relay() in
    // progress ends now (as a ClientError or an ended stream) and later ones fail.
    void abort();

    // Raw access, for protocol tests: write bytes as they are, then read one response. Interim 1xx
    // responses (100 Continue) are skipped unless `return_interim`.
    void send_raw(std::string_view bytes);
    ClientResponse read_response(bool head_request = false, bool return_interim = false);
    // Reads until the server closes the connection and returns the bytes; throws on timeout.
    std::string read_until_closed();
    // Reads until `marker` has arrived and returns every byte read so far; throws ClientError on timeout
    // or when the server closes first.
    std::string read_until(std::string_view marker);
    // Closes the sending side only (a half-close): the server sees the end of the client's bytes, and the
    // connection stays open for reading the answer.
    void shutdown_send();

    void close();
    bool connected() const;
    // TCP connections opened so far (1 after several keep-alive requests).
    std::size_t connections_opened() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace server::http
