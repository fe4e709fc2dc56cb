// SSE streaming over real sockets: ordering, incremental delivery, producers on other threads, client
// disconnects, backpressure and server shutdown. No Catch assertions run off the main thread.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "server/http/errors.h"
#include "test_support.h"

using namespace http_test;

namespace {

// A streaming route that hands its writer to the test thread and counts cancel callbacks.
struct StreamRoute {
    std::promise<std::shared_ptr<StreamWriter>> writer;
    std::atomic<bool> handed{false};
    std::atomic<int> cancels{0};
    std::promise<void> first_cancel;
    StreamOptions options;

    Handler handler() {
        return [this](Request& req) -> Reply {
            auto w = req.stream(options);
            w->on_cancel([this] {
                if (cancels.fetch_add(1) == 0) first_cancel.set_value();
            });
            if (!handed.exchange(true)) writer.set_value(w);
            return w;
        };
    }
};

}  // namespace

TEST_CASE("SSE events arrive in order and each before the next is produced", "[http][stream]") {
    Server server(test_config());
    StreamRoute route;
    auto writer_future = route.writer.get_future();
    server.post("/v1/chat/completions", route.handler());
    server.start();

    std::promise<void> got_first, got_second;
    std::vector<std::string> data;
    StreamResult result;
    std::thread client_thread([&] {
        Client client = make_client(server);
        result =
            client.stream("POST", "/v1/chat/completions", R"({"stream":true})", {}, [&](const SseEvent& e) {
                data.push_back(e.data);
                if (data.size() == 1) got_first.set_value();
                if (data.size() == 2) got_second.set_value();
                return true;
            });
    });

    auto writer = await(writer_future);
    REQUIRE(writer->send(R"({"n":1})"));
    auto first = got_first.get_future();
    await(first);  // the client holds event 1 while event 2 does not exist yet
    REQUIRE(writer->send(R"({"n":2})"));
    auto second = got_second.get_future();
    await(second);
    REQUIRE(writer->send("[DONE]"));
    writer->close();
    client_thread.join();

    CHECK(result.status == 200);
    CHECK(result.headers.value_or("Content-Type") == "text/event-stream");
    CHECK(result.headers.value_or("Transfer-Encoding") == "chunked");
    CHECK(result.complete);
    CHECK(data == std::vector<std::string>{R"({"n":1})", R"({"n":2})", "[DONE]"});
    CHECK(route.cancels == 0);
    CHECK_FALSE(writer->send("after close"));
}

TEST_CASE("a producer thread streams many events in order, then the connection is reused", "[http][stream]") {
    Server server(test_config());
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::shared_ptr<StreamWriter>> jobs;
    server.get("/stream", [&](Request& req) {
        auto writer = req.stream();
        {
            std::lock_guard lock(mu);
            jobs.push_back(writer);
        }
        cv.notify_one();
        return writer;
    });
    server.get("/health", [](Request&) { return Response::text("ok"); });
    server.start();

    std::atomic<bool> all_sent{true};
    std::thread engine([&] {  // the "engine thread": owns the writer after the handler returned
        std::unique_lock lock(mu);
        if (!cv.wait_for(lock, 10s, [&] { return !jobs.empty(); })) return;
        auto writer = jobs.front();
        lock.unlock();
        for (int i = 0; i < 500; ++i) {
            if (!writer->send("{\"i\":" + std::to_string(i) + "}")) all_sent = false;
        }
        writer->close();
    });

    Client client = make_client(server);
    std::vector<std::string> data;
    auto result = client.stream("GET", "/stream", {}, {}, [&](const SseEvent& e) {
        data.push_back(e.data);
        return true;
    });
    engine.join();
    CHECK(all_sent);
    CHECK(result.complete);
    REQUIRE(data.size() == 500);
    for (int i = 0; i < 500; ++i) CHECK(data[i] == "{\"i\":" + std::to_string(i) + "}");
    CHECK(client.get("/health").body == "ok");  // the stream ended cleanly: keep-alive goes on
    CHECK(client.connections_opened() == 1);
}

TEST_CASE("a client disconnect fires the cancel callback exactly once, even while idle", "[http][stream]") {
    Server server(test_config());
    StreamRoute route;
    auto writer_future = route.writer.get_future();
    server.get("/stream", route.handler());
    server.start();

    StreamResult result;
    std::thread client_thread([&] {
        Client client = make_client(server);
        result = client.stream("GET", "/stream", {}, {}, [](const SseEvent&) { return false; });  // leave
    });
    auto writer = await(writer_future);
    REQUIRE(writer->send("hello"));
    // The producer now stays silent: the disconnect must be noticed without a failed write.
    auto cancelled = route.first_cancel.get_future();
    await(cancelled);
    client_thread.join();

    CHECK(result.aborted);
    CHECK(result.events == 1);
    CHECK(writer->cancelled());
    CHECK_FALSE(writer->send("anyone?"));
    writer->close();
    CHECK(server.wait_for_connections(0, 10s));
    CHECK(route.cancels == 1);

    int late = 0;
    writer->on_cancel([&] { ++late; });  // after the fact: never runs twice for one stream
    CHECK(late == 0);
}

TEST_CASE("200 clients that disconnect mid-stream leave no connection behind", "[http][stream]") {
    Server server(test_config());
    std::mutex mu;
    std::vector<std::shared_ptr<StreamWriter>> writers;
    std::atomic<int> cancels{0};
    server.get("/stream", [&](Request& req) {
        auto writer = req.stream();
        writer->on_cancel([&] { ++cancels; });
        writer->send("first");
        std::lock_guard lock(mu);
        writers.push_back(writer);  // the "engine" keeps them, silent
        return writer;
    });
    server.start();

    constexpr int kThreads = 4, kPerThread = 50;
    std::atomic<int> aborted{0}, errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < kPerThread; ++i) {
                try {
                    Client client = make_client(server);
                    auto r = client.stream("GET", "/stream", {}, {}, [](const SseEvent&) { return false; });
                    if (r.aborted) ++aborted;
                } catch (const std::exception&) {
                    ++errors;
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    CHECK(errors == 0);
    CHECK(aborted == kThreads * kPerThread);
    REQUIRE(server.wait_for_connections(0, 20s));
    CHECK(server.open_connections() == 0);
    CHECK(cancels == kThreads * kPerThread);
    std::lock_guard lock(mu);
    CHECK(writers.size() == kThreads * kPerThread);
    for (const auto& w : writers) CHECK_FALSE(w->send("x"));
}

TEST_CASE("a client that stops reading fails the stream instead of growing the queue", "[http][stream]") {
    Server server(test_config());
    StreamRoute route;
    route.options.max_queued_bytes = 64 * 1024;
    auto writer_future = route.writer.get_future();
    server.get("/stream", route.handler());
    server.start();

    Client client = make_client(server);
    client.send_raw("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");  // and never read
    auto writer = await(writer_future);
    const std::string payload(16 * 1024, 'x');
    int sent = 0;
    bool refused = false;
    for (int i = 0; i < 200000 && !refused; ++i) {  // bounded: the socket buffers hold a few MB at most
        if (writer->send(payload)) {
            ++sent;
        } else {
            refused = true;
        }
    }
    REQUIRE(refused);
    CHECK(sent > 0);
    auto cancelled = route.first_cancel.get_future();
    await(cancelled);
    CHECK(writer->cancelled());
    CHECK(route.cancels == 1);
}

TEST_CASE("a streaming request answered with an error reads as a plain body", "[http][stream]") {
    Server server(test_config());
    server.post("/v1/completions", [](Request&) -> Reply { throw HttpError(400, "/prompt: is required"); });
    server.start();
    Client client = make_client(server);
    int events = 0;
    auto r = client.stream("POST", "/v1/completions", R"({"stream":true})", {}, [&](const SseEvent&) {
        ++events;
        return true;
    });
    CHECK(r.status == 400);
    CHECK(r.complete);
    CHECK(events == 0);
    CHECK(nlohmann::json::parse(r.body)["error"]["message"] == "/prompt: is required");
}

TEST_CASE("HEAD on a streaming route sends the headers and cancels the stream", "[http][stream]") {
    Server server(test_config());
    StreamRoute route;
    server.get("/stream", route.handler());
    server.get("/health", [](Request&) { return Response::text("ok"); });
    server.start();
    Client client = make_client(server);
    auto head = client.request("HEAD", "/stream");
    CHECK(head.status == 200);
    CHECK(head.body.empty());
    CHECK(head.headers.value_or("Content-Type") == "text/event-stream");
    auto cancelled = route.first_cancel.get_future();
    await(cancelled);
    CHECK(client.get("/health").body == "ok");
    CHECK(client.connections_opened() == 1);
}

TEST_CASE("a writer dropped without close() truncates the stream", "[http][stream]") {
    Server server(test_config());
    server.get("/stream", [](Request& req) {
        auto writer = req.stream();
        writer->send("only");
        return writer;  // nobody keeps it: the response is aborted
    });
    server.start();
    Client client = make_client(server);
    std::vector<std::string> data;
    auto r = client.stream("GET", "/stream", {}, {}, [&](const SseEvent& e) {
        data.push_back(e.data);
        return true;
    });
    CHECK_FALSE(r.complete);
    CHECK_FALSE(r.error.empty());
}

TEST_CASE("an HTTP/1.0 client gets the stream without chunking, ended by close", "[http][stream]") {
    Server server(test_config());
    server.get("/stream", [](Request& req) {
        auto writer = req.stream();
        writer->send("a");
        writer->send("b");
        writer->close();
        return writer;
    });
    server.start();
    Client client = make_client(server);
    client.send_raw("GET /stream HTTP/1.0\r\n\r\n");
    std::string raw = client.read_until_closed();
    CHECK(raw.find("Transfer-Encoding") == std::string::npos);
    CHECK(raw.substr(raw.find("\r\n\r\n") + 4) == "data: a\n\ndata: b\n\n");
}

TEST_CASE("stop() ends active streams and runs their cancel callbacks", "[http][stream]") {
    Server server(test_config());
    StreamRoute route;
    auto writer_future = route.writer.get_future();
    server.get("/stream", route.handler());
    server.start();

    std::promise<void> got_first;
    StreamResult result;
    std::thread client_thread([&] {
        Client client = make_client(server);
        bool first = true;
        result = client.stream("GET", "/stream", {}, {}, [&](const SseEvent&) {
            if (first) got_first.set_value();
            first = false;
            return true;
        });
    });
    auto writer = await(writer_future);
    REQUIRE(writer->send("a"));
    auto first = got_first.get_future();
    await(first);
    server.stop(100ms);  // the stream does not end by itself: forced close after the grace period
    auto cancelled = route.first_cancel.get_future();
    await(cancelled);
    client_thread.join();
    CHECK_FALSE(result.complete);
    CHECK_FALSE(writer->send("after stop"));
    CHECK(server.open_connections() == 0);
}

TEST_CASE("stop() lets a deferred response in flight finish within the grace period", "[http][stream]") {
    Server server(test_config());
    std::promise<std::shared_ptr<DeferredResponse>> handed;
    auto handed_future = handed.get_future();
    server.get("/slow", [&](Request& req) {
        auto pending = req.defer();
        handed.set_value(pending);
        return pending;
    });
    server.start();

    ClientResponse response;
    std::thread client_thread([&] {
        Client client = make_client(server);
        response = client.get("/slow");
    });
    auto pending = await(handed_future);
    std::thread stopper([&] { server.stop(10s); });
    for (int i = 0; i < 10'000'000 && server.running(); ++i) std::this_thread::yield();  // stop() has begun
    CHECK_FALSE(server.running());
    CHECK(pending->respond(Response::text("finished")));
    client_thread.join();
    stopper.join();
    CHECK(response.status == 200);
    CHECK(response.body == "finished");
    CHECK(response.headers.value_or("Connection") == "close");
}

TEST_CASE("a client that half-closes after a streaming request still gets the whole stream", "[http][stream]") {
    Server server(test_config());
    StreamRoute route;
    auto writer_future = route.writer.get_future();
    server.post("/stream", route.handler());
    server.start();
    Client client = make_client(server);
    client.send_raw("POST /stream HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    auto writer = await(writer_future);
    client.shutdown_send();
    // The server probes with an SSE comment, which a fully closed socket would answer with a reset;
    // before the fix it dropped the stream here.
    const std::string head = client.read_until(": ping");
    CHECK(head.rfind("HTTP/1.1 200", 0) == 0);
    REQUIRE(writer->send("hello"));
    writer->close();
    const std::string rest = client.read_until_closed();
    CHECK(rest.find("data: hello\n\n") != std::string::npos);
    CHECK(rest.size() >= 5);
    CHECK(rest.substr(rest.size() - 5) == "0\r\n\r\n");
    CHECK(route.cancels == 0);
    CHECK(server.wait_for_connections(0, 10s));
}

TEST_CASE("an event stream that stays silent for the ping interval gets ': ping' comments", "[http][stream][ping]") {
    ServerConfig cfg = test_config();
    cfg.sse_ping_interval = 50ms;
    Server server(cfg);
    StreamRoute route;
    auto writer_future = route.writer.get_future();
    server.post("/v1/completions", route.handler());
    server.start();
    Client client = make_client(server);
    client.send_raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                    "2\r\n\r\n{}");
    auto writer = await(writer_future);
    // Nothing has been produced: the stream's first bytes after its head are pings, framed as chunks.
    const std::string head = client.read_until("\r\n\r\n");
    CHECK(head.find("text/event-stream") != std::string::npos);
    CHECK(client.read_until(": ping\n\n").find("data:") == std::string::npos);
    const std::string second = client.read_until(": ping\n\n");  // and again while it stays silent
    CHECK(second.find("\r\n: ping\n\n") != std::string::npos);  // inside a chunk
    REQUIRE(writer->send(R"({"n":1})"));
    CHECK(client.read_until("data: {\"n\":1}\n\n").find("data:") != std::string::npos);
    writer->close();
    client.read_until("0\r\n\r\n");  // the last chunk: the stream ended normally
    CHECK(route.cancels == 0);
}
