// Requests from bytes as they arrive, independent of sockets (the connection feeds it what it reads; the
// fuzz target tests/fuzz/fuzz_http.cpp feeds it arbitrary bytes in arbitrary splits): empty lines before a
// request line are skipped, the header counts as a whole against its limit, the body against its own, and
// a finished message becomes a Request with its target split. Internal to the HTTP layer.
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "server/http/message.h"

namespace server::http::detail {

class RequestReader {
  public:
    RequestReader(std::size_t max_header_bytes, std::size_t max_body_bytes);

    // Starts the next request (on a kept-alive connection: after the previous one was taken).
    void reset();

    struct Progress {
        bool send_continue = false;  // the header asked for "100 Continue" before its body: send it now
        bool done = false;           // the request is complete: take() it
        int error_status = 0;        // 400, 413 or 431: answer with it and close (the stream is unusable)
        std::string error_message;
    };
    // Parses what `buffer` holds and consumes what it used (bytes of a pipelined request stay).
    Progress parse(boost::beast::flat_buffer& buffer);

    // Bytes of the current request have arrived (blank lines before it do not count).
    bool started() const { return started_; }

    struct Parsed {
        std::unique_ptr<Request>
            request;             // method, target, version, headers, body; path and query if target_ok
        std::string raw_path;    // still percent-encoded, for the router
        bool keep_alive = true;  // what the message asks for
        bool target_ok = true;   // false: answer 400 "malformed request target"
    };
    // After parse() reported done. The reader is then empty until reset().
    Parsed take();

  private:
    std::size_t parsed_header_bytes() const;

    const std::size_t max_header_bytes_;
    const std::size_t max_body_bytes_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    bool started_ = false;
    bool expect_checked_ = false;
    std::size_t header_bytes_ = 0;  // bytes of the current request's header handed to the parser so far
};

}  // namespace server::http::detail
