// The server over real sockets: routing, keep-alive, pipelining, limits, errors, timeouts, auth, CORS,
// deferred responses.
#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "server/http/errors.h"
#include "test_support.h"

using namespace http_test;
using nlohmann::json;

static void check_error(const ClientResponse& r, int status, const std::string& type) {
    CHECK(r.status == status);
    CHECK(r.headers.value_or("Content-Type").rfind("application/json", 0) == 0);
    json body = r.json();
    CHECK(body["error"]["type"] == type);
    CHECK(body["error"]["code"] == status);
    CHECK(body["error"]["message"].is_string());
}

TEST_CASE("requests are routed with path parameters and query strings", "[http][server]") {
    Server server(test_config());
    server.get("/health", [](Request&) { return Response::json({{"status", "ok"}}); });
    server.post("/slots/{id}", [](Request& req) {
        return Response::json({{"id", req.path_param("id")},
                               {"action", req.query_param("action").value_or("")},
                               {"name", req.query_param("name").value_or("")},
                               {"body", req.body}});
    });
    server.get("/slots/stats", [](Request&) { return Response::text("stats"); });
    server.start();
    REQUIRE(server.port() != 0);
    Client client = make_client(server);

    auto health = client.get("/health");
    CHECK(health.status == 200);
    CHECK(health.json()["status"] == "ok");

    auto slot = client.post("/slots/3?action=save&name=a%20b", R"({"filename":"x.bin"})");
    CHECK(slot.status == 200);
    json body = slot.json();
    CHECK(body["id"] == "3");
    CHECK(body["action"] == "save");
    CHECK(body["name"] == "a b");
    CHECK(body["body"] == R"({"filename":"x.bin"})");

    CHECK(client.get("/slots/stats").body == "stats");
    CHECK(client.post("/slots/a%2Fb", "").json()["id"] == "a/b");
}

TEST_CASE("a keep-alive connection serves several requests", "[http][server]") {
    Server server(test_config());
    server.get("/whoami", [](Request& req) { return Response::text(req.remote_address); });
    server.start();
    Client client = make_client(server);
    auto first = client.get("/whoami");
    auto second = client.get("/whoami");
    CHECK(first.status == 200);
    CHECK(first.headers.value_or("Connection") == "keep-alive");
    CHECK(first.body == second.body);  // same client port: same TCP connection
    CHECK(client.connections_opened() == 1);
    CHECK(server.open_connections() == 1);
    client.close();
    CHECK(server.wait_for_connections(0, 10s));
}

TEST_CASE("pipelined requests are answered in order", "[http][server]") {
    Server server(test_config());
    server.get("/a", [](Request&) { return Response::text("A"); });
    server.post("/b", [](Request& req) { return Response::text("B:" + req.body); });
    server.start();
    Client client = make_client(server);
    client.send_raw(
        "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
        "GET /missing HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(client.read_response().body == "A");
    CHECK(client.read_response().body == "B:hello");
    CHECK(client.read_response().status == 404);
    // The next request lands where it belongs, though a read was in flight while the buffer was parsed.
    CHECK(client.post("/b", "world").body == "B:world");
}

TEST_CASE("unknown paths get 404 and wrong methods 405, with error bodies", "[http][server]") {
    Server server(test_config());
    server.get("/v1/models", [](Request&) { return Response::json(json::object()); });
    server.start();
    Client client = make_client(server);
    check_error(client.get("/v1/nothing"), 404, "not_found_error");
    auto wrong = client.post("/v1/models", "{}");
    check_error(wrong, 405, "invalid_request_error");
    CHECK(wrong.headers.value_or("Allow") == "GET, HEAD");
    CHECK(client.get("/v1/models").status == 200);  // the connection survives both
    CHECK(client.connections_opened() == 1);
}

TEST_CASE("a body over the limit gets 413 and the server keeps serving", "[http][server]") {
    ServerConfig cfg = test_config();
    cfg.max_body_bytes = 1024;
    Server server(cfg);
    server.post("/echo", [](Request& req) { return Response::text(req.body); });
    server.start();
    Client client = make_client(server);
    CHECK(client.post("/echo", std::string(1024, 'a')).body.size() == 1024);
    auto big = client.post("/echo", std::string(4096, 'b'));
    check_error(big, 413, "invalid_request_error");
    CHECK(big.headers.value_or("Connection") == "close");
    CHECK(client.post("/echo", "small").body == "small");  // on a new connection

    // A chunked body is limited the same way.
    Client chunked = make_client(server);
    chunked.send_raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" +
                     std::string(2048, 'c') + "\r\n0\r\n\r\n");
    check_error(chunked.read_response(), 413, "invalid_request_error");
}

TEST_CASE("oversized headers get 431", "[http][server]") {
    ServerConfig cfg = test_config();
    cfg.max_header_bytes = 2048;
    Server server(cfg);
    server.get("/health", [](Request&) { return Response::text("ok"); });
    server.start();
    Client client = make_client(server);
    auto r = client.get("/health", {{"X-Big", std::string(4096, 'x')}});
    check_error(r, 431, "invalid_request_error");
    CHECK(make_client(server).get("/health").status == 200);
}

TEST_CASE("many small header lines count against the header limit as a whole", "[http][server]") {
    Server server(test_config());  // the default limit, 64 KiB
    server.get("/health", [](Request&) { return Response::text("ok"); });
    server.start();
    // 2,000 lines of ~50 bytes: 100 KiB of header, no line anywhere near the limit by itself.
    std::string head = "GET /health HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < 2000; ++i) head += "X-Line-" + std::to_string(i) + ": " + std::string(36, 'v') + "\r\n";
    REQUIRE(head.size() > 96 * 1024);
    Client client = make_client(server);
    client.send_raw(head + "\r\n");
    check_error(client.read_response(), 431, "invalid_request_error");
    // Just under the limit still passes.
    std::string fits = "GET /health HTTP/1.1\r\nHost: x\r\n";
    while (fits.size() < 60 * 1024) fits += "X-Line: " + std::string(40, 'v') + "\r\n";
    Client ok = make_client(server);
    ok.send_raw(fits + "\r\n");
    CHECK(ok.read_response().status == 200);
}

TEST_CASE("malformed requests get 400 and never wedge the server", "[http][server]") {
    Server server(test_config());
    server.get("/health", [](Request&) { return Response::text("ok"); });
    server.start();
    const std::vector<std::string> bad = {
        "GARBAGE\r\n\r\n",
        "GET\r\n\r\n",
        "GET /health\r\n\r\n",
        "GET /health HTTP/1.1 extra\r\n\r\n",
        "GET /health XTTP/1.1\r\n\r\n",
        "GET /health HTTP/2.0\r\n\r\n",
        "GET /health HTTP/1.1\r\nNo colon here\r\n\r\n",
        "GET /health HTTP/1.1\r\nBad Name: x\r\n\r\n",
        "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        "GET /health HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        "POST /health HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "GET health HTTP/1.1\r\n\r\n",
        "GET /a%zz HTTP/1.1\r\n\r\n",
        std::string("GET /\x01\x02 HTTP/1.1\r\n\r\n"),
        std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) + "\r\n\r\n",  // TLS hello
    };
    for (const auto& raw : bad) {
        INFO("request: " << raw);
        Client client = make_client(server);
        client.send_raw(raw);
        check_error(client.read_response(), 400, "invalid_request_error");
        CHECK_FALSE(client.connected());  // the server closed: the byte stream is unusable
    }
    CHECK(make_client(server).get("/health").body == "ok");
    CHECK(server.wait_for_connections(0, 10s));
}

TEST_CASE("a transfer coding other than chunked gets 501 instead of a body read as plain", "[http][server]") {
    Server server(test_config());
    server.post("/echo", [](Request& req) { return Response::text(req.body); });
    server.start();
    for (const std::string te : {"gzip, chunked", "deflate,chunked", "x-custom, chunked"}) {
        INFO(te);
        Client client = make_client(server);
        client.send_raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + te + "\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        check_error(client.read_response(), 501, "not_supported_error");
        CHECK_FALSE(client.connected());
    }
    // chunked alone, in any case and with spaces, is still read.
    Client client = make_client(server);
    client.send_raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:  Chunked \r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    const auto r = client.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "hello");
}

TEST_CASE("an incomplete request times out with 408, an idle connection is closed", "[http][server]") {
    ServerConfig cfg = test_config();
    cfg.read_timeout = 300ms;
    cfg.idle_timeout = 300ms;
    Server server(cfg);
    server.get("/health", [](Request&) { return Response::text("ok"); });
    server.start();

    Client partial = make_client(server);
    partial.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n");
    check_error(partial.read_response(), 408, "invalid_request_error");

    Client idle = make_client(server);
    CHECK(idle.get("/health").status == 200);
    CHECK(idle.read_until_closed().empty());  // the server closes the idle keep-alive connection
    CHECK(server.wait_for_connections(0, 10s));
}

TEST_CASE("API keys: 401 without a valid key, public paths and preflight exempt", "[http][server]") {
    ServerConfig cfg = test_config();
    cfg.api_keys = {"secret-1", "secret-2"};
    Server server(cfg);
    server.get("/health", [](Request&) { return Response::text("ok"); });
    server.get("/v1/props", [](Request&) { return Response::text("models"); });
    server.get("/v1/models", [](Request&) { return Response::text("list"); });
    server.start();
    Client client = make_client(server);

    auto missing = client.get("/v1/props");
    check_error(missing, 401, "authentication_error");
    CHECK(missing.json()["error"]["message"] == "Invalid API Key");
    check_error(client.get("/v1/props", {{"Authorization", "Bearer wrong"}}), 401, "authentication_error");
    check_error(client.get("/nowhere"), 401, "authentication_error");

    CHECK(client.get("/v1/props", {{"Authorization", "Bearer secret-2"}}).body == "models");
    CHECK(client.get("/v1/props", {{"X-Api-Key", "secret-1"}}).body == "models");
    CHECK(client.get("/health").body == "ok");
    CHECK(client.get("/v1/models").body == "list");  // public by default, as in llama-server
    CHECK(client.request("OPTIONS", "/v1/props").status == 204);
    CHECK(client.get("/nowhere", {{"Authorization", "Bearer secret-1"}}).status == 404);
}

TEST_CASE("CORS: preflight is answered and responses carry the allow-origin header", "[http][server]") {
    Server server(test_config());
    server.post("/v1/chat/completions", [](Request&) { return Response::json({{"ok", true}}); });
    server.start();
    Client client = make_client(server);
    auto pre = client.request("OPTIONS", "/v1/chat/completions", {},
                              {{"Origin", "http://localhost:3000"},
                               {"Access-Control-Request-Method", "POST"},
                               {"Access-Control-Request-Headers", "authorization, content-type"}});
    CHECK(pre.status == 204);
    CHECK(pre.body.empty());
    CHECK(pre.headers.value_or("Access-Control-Allow-Origin") == "http://localhost:3000");
    CHECK(pre.headers.value_or("Access-Control-Allow-Headers") == "authorization, content-type");
    CHECK(pre.headers.value_or("Access-Control-Allow-Methods").find("POST") != std::string::npos);

    auto r = client.post("/v1/chat/completions", "{}", {{"Origin", "http://localhost:3000"}});
    CHECK(r.headers.value_or("Access-Control-Allow-Origin") == "http://localhost:3000");
    CHECK(client.get("/nope").headers.value_or("Access-Control-Allow-Origin") == "*");
}

TEST_CASE("HEAD gets the GET headers without a body, HTTP/1.0 closes", "[http][server]") {
    Server server(test_config());
    server.get("/doc", [](Request&) { return Response::text("twelve bytes"); });
    server.start();
    Client client = make_client(server);
    auto head = client.request("HEAD", "/doc");
    CHECK(head.status == 200);
    CHECK(head.body.empty());
    CHECK(head.headers.value_or("Content-Length") == "12");
    CHECK(client.get("/doc").body == "twelve bytes");  // no stray body bytes were sent
    CHECK(client.connections_opened() == 1);

    Client old = make_client(server);
    old.send_raw("GET /doc HTTP/1.0\r\n\r\n");
    std::string raw = old.read_until_closed();
    CHECK(raw.find("HTTP/1.1 200 OK\r\n") == 0);
    CHECK(raw.find("Connection: close\r\n") != std::string::npos);
    CHECK(raw.substr(raw.size() - 12) == "twelve bytes");
}

TEST_CASE("Expect: 100-continue gets an interim response before the body is sent", "[http][server]") {
    Server server(test_config());
    server.post("/echo", [](Request& req) { return Response::text(req.body); });
    server.start();
    Client client = make_client(server);
    client.send_raw("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
    CHECK(client.read_response(false, true).status == 100);
    client.send_raw("data");
    CHECK(client.read_response().body == "data");
}

TEST_CASE("handler errors become error responses", "[http][server]") {
    Server server(test_config());
    server.post("/bad", [](Request&) -> Reply { throw HttpError(400, "'messages' is required"); });
    server.post("/boom", [](Request&) -> Reply { throw std::runtime_error("kaboom"); });
    server.get("/async-nothing", [](Request&) -> Reply { return std::shared_ptr<StreamWriter>(); });
    server.start();
    Client client = make_client(server);
    auto bad = client.post("/bad", "{}");
    check_error(bad, 400, "invalid_request_error");
    CHECK(bad.json()["error"]["message"] == "'messages' is required");
    auto boom = client.post("/boom", "{}");
    check_error(boom, 500, "server_error");
    CHECK(boom.json()["error"]["message"] == "kaboom");
    check_error(client.get("/async-nothing"), 500, "server_error");
}

TEST_CASE("a deferred response is answered from another thread", "[http][server]") {
    Server server(test_config());
    std::promise<std::shared_ptr<DeferredResponse>> handed;
    auto handed_future = handed.get_future();
    server.post("/v1/completions", [&](Request& req) {
        auto pending = req.defer();
        handed.set_value(pending);
        return pending;
    });
    server.get("/dropped", [](Request& req) { return req.defer(); });  // nobody keeps it
    server.start();

    bool first_ok = false, second_ok = true;
    std::thread engine([&] {  // no Catch assertions off the main thread
        if (handed_future.wait_for(10s) != std::future_status::ready) return;
        auto pending = handed_future.get();
        first_ok = pending->respond(Response::json({{"text", "hello"}}, 201));
        second_ok = pending->respond(Response::text("twice"));
    });
    Client client = make_client(server);
    auto r = client.post("/v1/completions", R"({"prompt":"x"})");
    engine.join();
    CHECK(first_ok);
    CHECK_FALSE(second_ok);
    CHECK(r.status == 201);
    CHECK(r.json()["text"] == "hello");

    auto dropped = client.get("/dropped");
    check_error(dropped, 500, "server_error");
    CHECK(client.connections_opened() == 1);
}

TEST_CASE("a client that leaves a deferred request cancels it", "[http][server]") {
    Server server(test_config());
    std::promise<void> cancelled;
    auto cancelled_future = cancelled.get_future();
    std::promise<std::shared_ptr<DeferredResponse>> handed;
    auto handed_future = handed.get_future();
    server.post("/v1/completions", [&](Request& req) {
        auto pending = req.defer();
        pending->on_cancel([&] { cancelled.set_value(); });
        handed.set_value(pending);
        return pending;
    });
    server.start();
    Client client = make_client(server);
    client.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
    auto pending = await(handed_future);
    client.close();
    await(cancelled_future);
    CHECK(pending->cancelled());
    CHECK_FALSE(pending->respond(Response::text("too late")));
    CHECK(server.wait_for_connections(0, 10s));
}

TEST_CASE("connections beyond max_connections get 503", "[http][server]") {
    ServerConfig cfg = test_config();
    cfg.max_connections = 1;
    Server server(cfg);
    server.get("/health", [](Request&) { return Response::text("ok"); });
    server.start();
    Client first = make_client(server);
    CHECK(first.get("/health").status == 200);
    Client second = make_client(server);
    second.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    check_error(second.read_response(), 503, "unavailable_error");
    CHECK(first.get("/health").status == 200);
}

TEST_CASE("routes cannot be added after start and a port in use is reported", "[http][server]") {
    Server server(test_config());
    server.get("/health", [](Request&) { return Response::text("ok"); });
    server.start();
    CHECK(server.running());
    CHECK_THROWS_AS(server.get("/late", [](Request&) { return Response::text("x"); }), std::logic_error);

    ServerConfig clash = test_config();
    clash.port = server.port();
    Server other(clash);
    CHECK_THROWS_AS(other.start(), std::runtime_error);

    server.stop();
    CHECK_FALSE(server.running());
    server.stop();  // idempotent
    server.wait();  // returns at once once stopped
}

TEST_CASE("a client that half-closes after its request still gets the deferred response", "[http][server]") {
    Server server(test_config());
    std::promise<std::shared_ptr<DeferredResponse>> handed;
    auto handed_future = handed.get_future();
    std::atomic<int> cancels{0};
    server.post("/v1/completions", [&](Request& req) {
        auto pending = req.defer();
        pending->on_cancel([&] { ++cancels; });
        handed.set_value(pending);
        return pending;
    });
    server.start();
    Client client = make_client(server);
    client.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
    auto pending = await(handed_future);
    client.shutdown_send();  // the request is complete: no more bytes from this client
    // The server probes with an interim response (a fully closed socket would answer it with a reset);
    // before the fix it closed the connection here and cancelled the request.
    const ClientResponse interim = client.read_response(false, true);
    CHECK(interim.status == 100);
    CHECK(pending->respond(Response::text("late but wanted")));
    const ClientResponse r = client.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "late but wanted");
    CHECK(r.headers.value_or("Connection") == "close");
    CHECK(cancels == 0);
    CHECK(server.wait_for_connections(0, 10s));
}

TEST_CASE("an HTTP/1.0 client that half-closes still counts as gone", "[http][server]") {
    // HTTP/1.0 has no interim responses, so nothing can probe whether the client still reads.
    Server server(test_config());
    std::promise<void> cancelled;
    auto cancelled_future = cancelled.get_future();
    std::promise<std::shared_ptr<DeferredResponse>> handed;
    auto handed_future = handed.get_future();
    server.post("/v1/completions", [&](Request& req) {
        auto pending = req.defer();
        pending->on_cancel([&] { cancelled.set_value(); });
        handed.set_value(pending);
        return pending;
    });
    server.start();
    Client client = make_client(server);
    client.send_raw("POST /v1/completions HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}");
    auto pending = await(handed_future);
    client.shutdown_send();
    await(cancelled_future);
    CHECK(pending->cancelled());
}

TEST_CASE("a handed-off request answers from another thread, streamed or not, or 500 when dropped",
          "[http][server]") {
    Server server(test_config());
    std::mutex mu;
    std::vector<std::thread> workers;
    // The handler returns at once; a worker thread answers through the copy of the request.
    server.post("/work", [&](Request& req) -> Reply {
        auto copy = req.hand_off();
        if (copy->body == "stream before the handler returns") {
            // The whole stream is produced before the connection sees the handler's reply: its head must
            // still be written once.
            std::thread([copy] {
                auto w = copy->stream();
                w->send("early");
                w->close();
            }).join();
            return Reply::handed_off();
        }
        std::lock_guard lock(mu);
        workers.emplace_back([copy] {
            if (copy->body == "stream") {
                auto w = copy->stream();
                w->send("one");
                w->send("two");
                w->close();
            } else if (copy->body == "defer") {
                copy->defer()->respond(Response::text("deferred " + copy->path, 201));
            } else if (copy->body == "error") {
                copy->defer()->respond(error_response(400, "bad body"));
            }  // else: dropped without an answer
        });
        return Reply::handed_off();
    });
    server.start();
    Client client = make_client(server);
    auto d = client.post("/work", "defer");
    CHECK(d.status == 201);
    CHECK(d.body == "deferred /work");
    auto e = client.post("/work", "error");
    check_error(e, 400, "invalid_request_error");
    auto dropped = client.post("/work", "nothing");
    check_error(dropped, 500, "server_error");
    std::vector<std::string> events;
    auto s = client.stream("POST", "/work", "stream", {}, [&](const SseEvent& ev) {
        events.push_back(ev.data);
        return true;
    });
    CHECK(s.status == 200);
    CHECK(s.complete);
    CHECK(events == std::vector<std::string>{"one", "two"});
    events.clear();
    auto early = client.stream("POST", "/work", "stream before the handler returns", {}, [&](const SseEvent& ev) {
        events.push_back(ev.data);
        return true;
    });
    CHECK(early.status == 200);
    CHECK(early.complete);
    CHECK(events == std::vector<std::string>{"early"});
    CHECK(client.get("/work").status == 405);  // the connection is still usable
    CHECK(client.connections_opened() == 1);
    std::lock_guard lock(mu);
    for (auto& t : workers) t.join();
}
