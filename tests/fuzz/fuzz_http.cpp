// libFuzzer target: raw bytes as a client's side of a connection, fed to the request reader in
// arbitrary splits (as reads return them), each finished request dispatched as the connection does it
// (CORS preflight, router with path parameters, API key, handlers) and its response head serialized;
// pipelined requests follow until the stream ends or a parse error closes it.
// Input: byte 0 picks the limits and the API key, byte 1 seeds the split sizes, the rest is the stream.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "server/http/cors.h"
#include "server/http/dispatch.h"
#include "server/http/errors.h"
#include "server/http/request_reader.h"
#include "server/http/wire.h"

using namespace server::http;

namespace {

Router make_router() {
    Router r;
    r.add("GET", "/health", [](Request&) -> Reply { return Response::text("ok"); });
    r.add("POST", "/completion", [](Request& req) -> Reply {
        return Response::text(std::to_string(req.body.size()) + " " + req.headers.value_or("Content-Type"));
    });
    r.add("POST", "/slots/{id}", [](Request& req) -> Reply {
        const std::string action = req.query_param("action").value_or("none");
        if (action == "fail") throw HttpError(400, "bad action");
        return Response::text(req.path_param("id") + ":" + action);
    });
    r.add("GET", "/v1/models/{name}",
          [](Request& req) -> Reply { return Response::text(req.path_param("name")); });
    // Requests built outside a connection cannot go async: stream() throws, which must become a 500.
    r.add("POST", "/stream", [](Request& req) -> Reply { return req.stream(); });
    r.add("GET", "/throw", [](Request&) -> Reply { throw std::runtime_error("boom"); });
    return r;
}

struct SplitRng {
    uint32_t state;
    size_t next(size_t left) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        size_t n = 1 + state % 97;
        if (state % 11 == 0) n = left;  // sometimes everything at once
        return n < left ? n : left;
    }
};

void answer(Response response, const Headers& request_headers, const CorsPolicy& cors) {
    add_cors_headers(cors, request_headers, response.headers);
    if (status_allows_body(response.status))
        response.headers.set("Content-Length", std::to_string(response.body.size()));
    const std::string head = serialize_head(response.status, response.headers);
    // Header injection is impossible: the head has exactly one blank line, at its end.
    if (head.find("\r\n\r\n") != head.size() - 4) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    static const Router router = make_router();
    const uint8_t mode = data[0];
    SplitRng rng{0x9E3779B9u ^ (uint32_t(data[1]) * 0x01000193u)};
    data += 2;
    size -= 2;

    const size_t max_header = (mode & 1) ? 256 : 64 * 1024;
    const size_t max_body = (mode & 2) ? 64 : 1024 * 1024;
    DispatchPolicy policy;
    policy.cors.enabled = mode & 4;
    if (mode & 8) policy.auth = ApiKeyAuth({"secret"}, {"/health"});
    if (mode & 16)
        policy.fallback = [](Request& req) -> Reply { return Response::text("static " + req.path); };

    detail::RequestReader reader(max_header, max_body);
    boost::beast::flat_buffer buffer;
    size_t pos = 0;
    int requests = 0;
    while (pos < size || buffer.size() > 0) {
        if (pos < size) {
            const size_t n = rng.next(size - pos);
            auto dst = buffer.prepare(n);
            std::memcpy(dst.data(), data + pos, n);
            buffer.commit(n);
            pos += n;
        }
        const auto progress = reader.parse(buffer);
        if (progress.error_status) {
            // 501: a transfer coding other than chunked.
            if (progress.error_status != 400 && progress.error_status != 413 && progress.error_status != 431 &&
                progress.error_status != 501)
                std::abort();
            CorsPolicy none;
            none.enabled = false;
            answer(error_response(progress.error_status, progress.error_message), {}, none);
            return 0;  // the connection closes
        }
        if (!progress.done) {
            if (pos >= size) break;  // the client stopped mid-request
            continue;
        }
        auto parsed = reader.take();
        Request& req = *parsed.request;
        if (req.body.size() > max_body) std::abort();
        if (!parsed.target_ok) {
            answer(error_response(400, "malformed request target"), req.headers, policy.cors);
            return 0;
        }
        Reply reply = dispatch_request(router, policy, req, parsed.raw_path);
        if (reply.is_async()) std::abort();  // no handler here can go async
        answer(std::move(reply.response()), req.headers, policy.cors);
        if (!parsed.keep_alive || ++requests > 64) return 0;
        reader.reset();
    }
    return 0;
}
