// Wire format of responses and chunks, error bodies, and SSE formatting and parsing.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "server/http/errors.h"
#include "server/http/sse.h"
#include "server/http/wire.h"

using namespace server::http;

TEST_CASE("serialize_head writes the status line and headers and blocks header injection", "[http][wire]") {
    Headers h{{"Content-Type", "text/plain"}, {"X-Evil", "a\r\nSet-Cookie: x=1"}};
    std::string head = serialize_head(404, h);
    CHECK(head == "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nX-Evil: a  Set-Cookie: x=1\r\n\r\n");
    CHECK(serialize_head(299, {}) == "HTTP/1.1 299 Unknown\r\n\r\n");
}

TEST_CASE("frame_chunk uses hexadecimal sizes", "[http][wire]") {
    CHECK(frame_chunk("hello") == "5\r\nhello\r\n");
    CHECK(frame_chunk(std::string(26, 'x')) == "1a\r\n" + std::string(26, 'x') + "\r\n");
    CHECK(kLastChunk == "0\r\n\r\n");
    CHECK_FALSE(status_allows_body(204));
    CHECK_FALSE(status_allows_body(304));
    CHECK_FALSE(status_allows_body(100));
    CHECK(status_allows_body(200));
}

TEST_CASE("error bodies follow the OpenAI shape with the matching type", "[http][errors]") {
    struct Case {
        int status;
        const char* type;
    };
    for (auto c :
         {Case{400, "invalid_request_error"}, Case{401, "authentication_error"},
          Case{403, "permission_error"}, Case{404, "not_found_error"}, Case{405, "invalid_request_error"},
          Case{413, "invalid_request_error"}, Case{500, "server_error"}, Case{501, "not_supported_error"},
          Case{503, "unavailable_error"}}) {
        Response r = error_response(c.status, "boom");
        CHECK(r.status == c.status);
        CHECK(r.headers.value_or("Content-Type") == "application/json; charset=utf-8");
        auto body = nlohmann::json::parse(r.body);
        CHECK(body["error"]["message"] == "boom");
        CHECK(body["error"]["type"] == c.type);
        CHECK(body["error"]["code"] == c.status);
    }
    CHECK(error_body(400, "too long", "exceed_context_size_error")["error"]["type"] ==
          "exceed_context_size_error");
    HttpError e(422, "nope");
    CHECK(e.status() == 422);
    CHECK(std::string(e.what()) == "nope");
}

TEST_CASE("format_sse_event prefixes every line of the payload", "[http][sse]") {
    CHECK(format_sse_event(R"({"a":1})") == "data: {\"a\":1}\n\n");
    CHECK(format_sse_event("x\ny\r\nz") == "data: x\ndata: y\ndata: z\n\n");
    CHECK(format_sse_event("[DONE]", "end") == "event: end\ndata: [DONE]\n\n");
    CHECK(format_sse_event("") == "data: \n\n");
}

TEST_CASE("SseParser reassembles events split anywhere, with any line ending", "[http][sse]") {
    std::string stream =
        ": comment\r\ndata: one\r\n\r\nevent: tick\rid: 7\rdata:two\rdata: lines\r\rdata: three\n\n";
    for (std::size_t split = 0; split <= stream.size(); ++split) {
        SseParser p;
        std::vector<SseEvent> got;
        auto collect = [&](SseEvent& e) {
            got.push_back(e);
            return true;
        };
        REQUIRE(p.feed(std::string_view(stream).substr(0, split), collect));
        REQUIRE(p.feed(std::string_view(stream).substr(split), collect));
        REQUIRE(got.size() == 3);
        CHECK(got[0].data == "one");
        CHECK(got[0].event.empty());
        CHECK(got[1].event == "tick");
        CHECK(got[1].id == "7");
        CHECK(got[1].data == "two\nlines");
        CHECK(got[2].data == "three");
    }
}

TEST_CASE("SseParser ignores events without data and stops when asked", "[http][sse]") {
    SseParser p;
    int n = 0;
    CHECK(p.feed("event: x\n\ndata: a\n\ndata: b\n\ndata: c\n\n", [&](SseEvent&) { return ++n < 2; }) ==
          false);
    CHECK(n == 2);
}
