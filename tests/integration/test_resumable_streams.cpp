// Resumable streams (llama-server's X-Conversation-Id, POST /v1/streams/lookup, GET and DELETE
// /v1/stream) against the real binary on stories260K: a named stream goes on without its client and can
// be replayed from any byte offset and followed to its end; DELETE and a newer request of the same
// conversation stop it, ending the stream for its readers; bad ids and offsets are errors.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "completion_util.h"
#include "context_util.h"
#include "server/http/client.h"
#include "server/http/sse.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;

namespace {

json chat_body(int max_tokens) {
    return {{"messages", json::array({{{"role", "user"}, {"content", "Once upon a time"}}})},
            {"max_tokens", max_tokens},
            {"temperature", 0},
            {"stream", true}};
}

// The raw body of a streamed answer; `stop_after` > 0: only until that many bytes have come, then the
// connection is dropped (a client that goes away).
struct Raw {
    int status = 0;
    std::string bytes;
    bool complete = false;
};
Raw raw(Client& c, const std::string& method, const std::string& target, const std::string& body,
        const server::http::Headers& headers = {}, size_t stop_after = 0) {
    Raw out;
    const auto r = c.relay(
        method, target, body, headers, [&](int status, const server::http::Headers&) {
            out.status = status;
            return true;
        },
        [&](std::string_view b) {
            out.bytes += b;
            return stop_after == 0 || out.bytes.size() < stop_after;
        });
    out.complete = r.complete;
    return out;
}

// The content of an OpenAI chat stream's bytes, and whether it ended with [DONE].
std::string content_of(const std::string& bytes, bool* done = nullptr) {
    server::http::SseParser p;
    std::string content;
    bool saw_done = false;
    p.feed(bytes, [&](server::http::SseEvent& e) {
        if (e.data == "[DONE]") {
            saw_done = true;
            return true;
        }
        const json j = json::parse(e.data);
        if (!j["choices"].empty()) {
            const json& d = j["choices"][0]["delta"];
            if (d.contains("content") && d["content"].is_string()) content += d["content"].get<std::string>();
        }
        return true;
    });
    if (done) *done = saw_done;
    return content;
}

}  // namespace

TEST_CASE("resumable streams: a named stream goes on without its client and replays from any offset",
          "[integration][streams]") {
    ServerProcess s({"-m", stories_model(), "-c", "4096", "-t", "1"});
    Client c("127.0.0.1", s.port());
    const std::string want = completion_util::stream_chat(c, chat_body(300)).content;
    REQUIRE_FALSE(want.empty());

    // The client reads a little and goes away; the generation goes on.
    Client a("127.0.0.1", s.port());
    const Raw first = raw(a, "POST", "/v1/chat/completions", chat_body(300).dump(), {{"X-Conversation-Id", "conv-a"}}, 400);
    REQUIRE(first.status == 200);
    REQUIRE(first.bytes.size() >= 400);

    // Replayed from the start and followed to the end: the whole answer, the same as without a name.
    const Raw full = raw(c, "GET", "/v1/stream?conv_id=conv-a&from=0", "");
    REQUIRE(full.status == 200);
    CHECK(full.complete);
    bool done = false;
    CHECK(content_of(full.bytes, &done) == want);
    CHECK(done);
    CHECK(full.bytes.compare(0, first.bytes.size(), first.bytes) == 0);  // what the client got came first

    // From an offset (the bytes the client had), and by the path form.
    const Raw rest = raw(c, "GET", "/v1/stream/conv-a?from=" + std::to_string(first.bytes.size()), "");
    CHECK(rest.bytes == full.bytes.substr(first.bytes.size()));
    CHECK(raw(c, "GET", "/v1/stream/conv-a", "").bytes == full.bytes);

    const auto found = c.post("/v1/streams/lookup", json{{"conversation_ids", {"conv-a", "nope"}}}.dump());
    REQUIRE(found.status == 200);
    const json sessions = found.json();
    REQUIRE(sessions.size() == 1);
    CHECK(sessions[0]["conversation_id"] == "conv-a");
    CHECK(sessions[0]["is_done"] == true);
    CHECK(sessions[0]["total_bytes"] == full.bytes.size());
    CHECK(sessions[0]["completed_at"].get<int64_t>() >= sessions[0]["started_at"].get<int64_t>());
    CHECK(c.post("/v1/streams/lookup", "not json").json() == json::array());  // finds none, as llama-server

    // Errors: an offset past the end, an unknown conversation, no id, a bad header.
    CHECK(c.get("/v1/stream?conv_id=conv-a&from=" + std::to_string(full.bytes.size() + 1)).status == 400);
    CHECK(c.get("/v1/stream?conv_id=conv-a&from=-1").status == 400);
    CHECK(c.get("/v1/stream?conv_id=nope").status == 404);
    CHECK(c.get("/v1/stream").status == 400);
    CHECK(c.post("/v1/chat/completions", chat_body(4).dump(), {{"X-Conversation-Id", "a b"}}).status == 400);

    const auto del = c.request("DELETE", "/v1/stream?conv_id=conv-a");
    CHECK(del.status == 204);
    CHECK(c.get("/v1/stream?conv_id=conv-a").status == 404);
    CHECK(c.request("DELETE", "/v1/stream/never-was").status == 204);
}

TEST_CASE("resumable streams: DELETE and a newer request of the conversation stop a running stream",
          "[integration][threads][streams]") {
    ServerProcess s({"-m", stories_model(), "-c", "4096", "-t", "1", "-np", "2", "--metrics"});
    Client c("127.0.0.1", s.port());
    Client ctl("127.0.0.1", s.port());
    const double cancelled_before = ctxtest::metric(s.port(), "ggserve:requests_cancelled_total");

    // Without a stop a named stream is the whole answer; with DELETE while its client reads, the client's
    // stream ends there, without [DONE].
    const Raw whole = raw(c, "POST", "/v1/chat/completions", chat_body(3000).dump(), {{"X-Conversation-Id", "conv-b"}});
    bool done = false;
    const std::string whole_content = content_of(whole.bytes, &done);
    CHECK(done);

    bool deleted = false;
    Raw reader;
    const auto r = c.relay(
        "POST", "/v1/chat/completions", chat_body(3000).dump(), {{"X-Conversation-Id", "conv-c"}},
        [&](int status, const server::http::Headers&) {
            reader.status = status;
            return true;
        },
        [&](std::string_view b) {
            reader.bytes += b;
            if (!deleted) {
                deleted = true;
                CHECK(ctl.request("DELETE", "/v1/stream?conv_id=conv-c").status == 204);
            }
            return true;
        });
    CHECK(r.complete);  // the stream ended properly, early
    done = false;
    const std::string partial = content_of(reader.bytes, &done);
    CHECK_FALSE(done);
    CHECK(partial.size() < whole_content.size());
    CHECK(whole_content.rfind(partial, 0) == 0);  // the same tokens, as far as it went
    // The engine thread drops the cancelled request on its next round, maybe after the stream ended.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ctxtest::metric(s.port(), "ggserve:requests_cancelled_total") < cancelled_before + 1 &&
           std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(ctxtest::metric(s.port(), "ggserve:requests_cancelled_total") == cancelled_before + 1);

    // A newer request of the same conversation stops the running one (and its follower).
    Raw older;
    bool started_newer = false;
    std::string newer_content;
    const auto o = c.relay(
        "POST", "/v1/chat/completions", chat_body(3000).dump(), {{"X-Conversation-Id", "conv-d"}},
        [&](int status, const server::http::Headers&) {
            older.status = status;
            return true;
        },
        [&](std::string_view b) {
            older.bytes += b;
            if (!started_newer) {
                started_newer = true;
                const Raw newer = raw(ctl, "POST", "/v1/chat/completions", chat_body(8).dump(),
                                      {{"X-Conversation-Id", "conv-d"}});
                bool newer_done = false;
                newer_content = content_of(newer.bytes, &newer_done);
                CHECK(newer_done);
            }
            return true;
        });
    CHECK(o.complete);
    done = false;
    content_of(older.bytes, &done);
    CHECK_FALSE(done);
    CHECK_FALSE(newer_content.empty());
    // The conversation's stream is now the newer one.
    CHECK(content_of(raw(ctl, "GET", "/v1/stream?conv_id=conv-d", "").bytes) == newer_content);
}
