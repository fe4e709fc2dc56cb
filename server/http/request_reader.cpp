#include "server/http/request_reader.h"

#include <algorithm>
#include <boost/beast/http/error.hpp>
#include <limits>

#include "server/http/headers.h"
#include "server/http/url.h"

namespace server::http::detail {

namespace bhttp = boost::beast::http;
using error_code = boost::system::error_code;

RequestReader::RequestReader(std::size_t max_header_bytes, std::size_t max_body_bytes)
    : max_header_bytes_(max_header_bytes), max_body_bytes_(max_body_bytes) {
    reset();
}

void RequestReader::reset() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(max_header_bytes_, std::numeric_limits<std::uint32_t>::max())));
    parser_->body_limit(max_body_bytes_);
    parser_->eager(true);
    started_ = false;
    expect_checked_ = false;
    header_bytes_ = 0;
}

RequestReader::Progress RequestReader::parse(boost::beast::flat_buffer& buffer) {
    Progress p;
    auto fail = [&](error_code ec) {
        if (ec == bhttp::error::header_limit) {
            p.error_status = 431;
            p.error_message = "request header too large";
        } else if (ec == bhttp::error::body_limit) {
            p.error_status = 413;
            p.error_message = "request body too large (limit " + std::to_string(max_body_bytes_) + " bytes)";
        } else {
            p.error_status = 400;
            p.error_message = "malformed HTTP request: " + ec.message();
        }
        return p;
    };
    if (!parser_) return p;  // taken, not reset yet
    while (buffer.size() > 0 && !parser_->is_done()) {
        if (!started_) {
            // Empty lines before a request line are allowed (RFC 9112 2.2): skip them.
            const char* data = static_cast<const char*>(buffer.data().data());
            std::size_t skip = 0;
            while (skip < buffer.size() && (data[skip] == '\r' || data[skip] == '\n')) ++skip;
            buffer.consume(skip);
            if (buffer.size() == 0) break;
            started_ = true;
        }
        error_code ec;
        const bool in_header = !parser_->is_header_done();
        const std::size_t used = parser_->put(buffer.data(), ec);
        buffer.consume(used);
        if (ec && ec != bhttp::error::need_more) return fail(ec);
        // The parser's own limit applies to what it holds at once; the header's total counts here, so
        // many small lines cannot pass the limit either.
        if (in_header) header_bytes_ += used;
        if (!parser_->is_header_done() && header_bytes_ + buffer.size() > max_header_bytes_) {
            return fail(bhttp::error::header_limit);
        }
        if (ec == bhttp::error::need_more) break;
        if (parser_->is_header_done() && !expect_checked_) {
            // A header that arrived whole is not checked against the limit by the parser: count it here.
            if (parsed_header_bytes() > max_header_bytes_) return fail(bhttp::error::header_limit);
            expect_checked_ = true;
            // Only "chunked" is a transfer coding we decode; a body in any other (gzip, chunked) would be
            // read as if it were plain, so it is refused as RFC 9112 6.1 asks.
            const std::string_view te = trim_ows(parser_->get()[bhttp::field::transfer_encoding]);
            if (!te.empty() && !iequals(te, "chunked")) {
                p.error_status = 501;
                p.error_message = "unsupported transfer coding '" + std::string(te) + "' (only chunked is)";
                return p;
            }
            // A client that sent "Expect: 100-continue" waits for the interim response before its body.
            const auto& msg = parser_->get();
            if (!parser_->is_done() && msg.version() == 11 &&
                iequals(msg[bhttp::field::expect], "100-continue")) {
                p.send_continue = true;
            }
        }
        if (used == 0) break;
    }
    p.done = parser_->is_done();
    return p;
}

// The size of the parsed header as sent (request line, "name: value\r\n" per field, the blank line),
// give or take optional whitespace.
std::size_t RequestReader::parsed_header_bytes() const {
    const auto& msg = parser_->get();
    std::size_t n = msg.method_string().size() + msg.target().size() + 12;  // " HTTP/1.1\r\n" and a space
    for (const auto& field : msg) n += field.name_string().size() + field.value().size() + 4;
    return n + 2;
}

RequestReader::Parsed RequestReader::take() {
    Parsed out;
    bhttp::request<bhttp::string_body> msg = parser_->release();
    parser_.reset();
    auto req = std::make_unique<Request>();
    req->method = std::string(msg.method_string());
    req->target = std::string(msg.target());
    req->version = msg.version();
    for (const auto& field : msg) req->headers.add(field.name_string(), field.value());
    req->body = std::move(msg.body());
    out.keep_alive = msg.keep_alive();
    if (auto target = split_target(req->target)) {
        req->path = std::move(target->path);
        req->query_string = std::move(target->query_string);
        req->query = parse_query(req->query_string);
        out.raw_path = std::move(target->raw_path);
    } else {
        out.target_ok = false;
    }
    out.request = std::move(req);
    return out;
}

}  // namespace server::http::detail
