// llama-server's chat UI options: --ui-config / --ui-config-file (default UI settings in /props) and
// --ui-mcp-proxy (the CORS proxy at /cors-proxy), against a small HTTP server run by the test.
#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_process.h"
#include "server/http/client.h"
#include "server/http/url.h"
#include "server_process.h"

using json = nlohmann::json;
using server::http::Client;
using tcp = boost::asio::ip::tcp;

namespace {

// One request as the upstream server received it.
struct Seen {
    std::string method, target, head, body;
    bool has_header(const std::string& line) const { return head.find(line) != std::string::npos; }
};

// A one-connection-at-a-time HTTP server on 127.0.0.1: records each request, then `respond` writes the
// answer on the socket (on the server's thread: no Catch2 macros there). Requests whose target starts
// with "/hang" get no answer until the server is destroyed.
class Upstream {
  public:
    using Respond = std::function<void(tcp::socket&, const Seen&)>;
    explicit Upstream(Respond respond) : respond_(std::move(respond)), acceptor_(ioc_, {tcp::v4(), 0}) {
        thread_ = std::thread([this] { serve(); });
    }
    ~Upstream() {
        {
            std::lock_guard lk(mu_);
            stopping_ = true;
        }
        cv_.notify_all();
        // A blocking accept() does not return when another thread closes the acceptor: connect to wake it.
        boost::system::error_code ignored;
        tcp::socket wake(ioc_);
        wake.connect({boost::asio::ip::address_v4::loopback(), port()}, ignored);
        thread_.join();
    }
    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
    std::vector<Seen> seen() const {
        std::lock_guard lk(mu_);
        return seen_;
    }

  private:
    void serve() {
        for (;;) {
            tcp::socket s(ioc_);
            boost::system::error_code ec;
            acceptor_.accept(s, ec);
            if (ec) return;
            {
                std::lock_guard lk(mu_);
                if (stopping_) return;
            }
            boost::asio::streambuf buf;
            const std::size_t n = boost::asio::read_until(s, buf, "\r\n\r\n", ec);
            if (ec) continue;
            Seen r;
            r.head.assign(boost::asio::buffers_begin(buf.data()), boost::asio::buffers_begin(buf.data()) + n);
            buf.consume(n);
            r.method = r.head.substr(0, r.head.find(' '));
            r.target = r.head.substr(r.method.size() + 1, r.head.find(' ', r.method.size() + 1) - r.method.size() - 1);
            std::size_t length = 0;
            for (const char* name : {"Content-Length: ", "content-length: "})
                if (auto at = r.head.find(name); at != std::string::npos) length = std::stoul(r.head.substr(at + 15));
            if (buf.size() < length) boost::asio::read(s, buf, boost::asio::transfer_exactly(length - buf.size()), ec);
            r.body.assign(boost::asio::buffers_begin(buf.data()), boost::asio::buffers_begin(buf.data()) + length);
            {
                std::lock_guard lk(mu_);
                seen_.push_back(r);
            }
            if (r.target.rfind("/hang", 0) == 0) {
                std::unique_lock lk(mu_);
                cv_.wait(lk, [this] { return stopping_; });
                return;
            }
            respond_(s, r);
            s.shutdown(tcp::socket::shutdown_both, ec);
        }
    }

    Respond respond_;
    boost::asio::io_context ioc_;
    tcp::acceptor acceptor_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stopping_ = false;
    std::vector<Seen> seen_;
    std::thread thread_;
};

void write(tcp::socket& s, const std::string& bytes) {
    boost::system::error_code ec;
    boost::asio::write(s, boost::asio::buffer(bytes), ec);
}

std::string chunk(const std::string& data) {
    char size[16];
    std::snprintf(size, sizeof size, "%zx", data.size());
    return std::string(size) + "\r\n" + data + "\r\n";
}

std::string proxy_path(const std::string& url) {
    return "/cors-proxy?url=" + server::http::percent_encode(url);
}

}  // namespace

TEST_CASE("ui config: --ui-config and --ui-config-file reach /props, bad ones stop startup", "[integration][ui-config]") {
    const json settings = {{"systemMessage", "Answer like a pirate."}, {"temperature", 0.25}, {"theme", "dark"}};
    {
        ServerProcess s(small_stories_args({"--ui-config", settings.dump()}));
        const json props = Client("127.0.0.1", s.port()).get("/props").json();
        CHECK(props["ui_settings"] == settings);
        CHECK(props["webui_settings"] == settings);
        CHECK(props["ui"] == true);
        CHECK(props["cors_proxy_enabled"] == false);
    }
    const std::string file = "/tmp/ggserve_test_ui_config_" + std::to_string(getpid()) + ".json";
    std::ofstream(file) << settings.dump(2);
    for (const bool by_env : {false, true}) {
        INFO((by_env ? "LLAMA_ARG_UI_CONFIG_FILE" : "--webui-config-file"));
        ServerProcess s(by_env ? small_stories_args({"--no-webui"}) : small_stories_args({"--webui-config-file", file}),
                        std::chrono::seconds(60), ServerProcess::WaitFor::Ready,
                        by_env ? std::vector<std::string>{"LLAMA_ARG_UI_CONFIG_FILE=" + file} : std::vector<std::string>{});
        const json props = Client("127.0.0.1", s.port()).get("/props").json();
        CHECK(props["ui_settings"] == settings);
        CHECK(props["ui"] == !by_env);
    }
    {
        ServerProcess s(small_stories_args({}));
        CHECK(Client("127.0.0.1", s.port()).get("/props").json()["ui_settings"] == json::object());
    }
    const std::string serve = "serve --port 0 -m " + stories_model() + " ";
    struct Bad {
        std::string args, message;
    };
    for (const Bad& bad : std::vector<Bad>{
             {"--ui-config '{\"theme\": '", "--ui-config: not valid JSON"},
             {"--ui-config '[1, 2]'", "must be a JSON object"},
             {"--ui-config-file /nonexistent/ui.json", "--ui-config-file: cannot read '/nonexistent/ui.json'"},
             {"--ui-config '{}' --ui-config-file " + file, "not both"}}) {
        INFO(bad.args);
        const CliResult r = run_ggserve(serve + bad.args);
        CHECK(r.code == 2);
        CHECK(r.output.find(bad.message) != std::string::npos);
    }
    std::remove(file.c_str());
    // `run` has no chat UI.
    const CliResult run = run_ggserve("run -m " + stories_model() + " -p Hi -n 1 --ui-config '{}'");
    CHECK(run.code == 2);
    CHECK(run.output.find("the chat UI belongs to the server") != std::string::npos);
}

TEST_CASE("cors proxy: off by default, /cors-proxy answers 403", "[integration][cors-proxy]") {
    ServerProcess s(small_stories_args({}));
    Client c("127.0.0.1", s.port());
    for (const bool post : {false, true}) {
        const auto r = post ? c.post(proxy_path("http://127.0.0.1:1/"), "{}") : c.get(proxy_path("http://127.0.0.1:1/"));
        CHECK(r.status == 403);
        CHECK(r.json()["error"]["type"] == "feature_disabled");
    }
    CHECK(s.log().find("CORS proxy is enabled") == std::string::npos);
}

TEST_CASE("cors proxy: GET and POST are relayed, with the wrapped headers and not the API key", "[integration][cors-proxy][cors-relay]") {
    Upstream up([](tcp::socket& s, const Seen& r) {
        if (r.target == "/empty") return write(s, "HTTP/1.1 204 No Content\r\n\r\n");
        const std::string body = r.method == "POST" ? "{\"echo\":" + r.body + "}" : "{\"hello\":\"mcp\"}";
        write(s, std::string("HTTP/1.1 ") + (r.method == "POST" ? "201 Created" : "200 OK") +
                     "\r\nContent-Type: application/json\r\nMcp-Session-Id: session-7\r\n"
                     "Access-Control-Allow-Origin: https://elsewhere.example\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body);
    });
    ServerProcess s(small_stories_args({"--ui-mcp-proxy", "--api-key", "k1"}));
    CHECK(s.log().find("CORS proxy is enabled, do not expose server to untrusted environments") != std::string::npos);
    Client c("127.0.0.1", s.port());
    const std::string base = "http://127.0.0.1:" + std::to_string(up.port());
    // The API key is checked as for any endpoint.
    CHECK(c.get(proxy_path(base + "/mcp?x=1")).status == 401);
    CHECK(c.get("/props", {{"Authorization", "Bearer k1"}}).json()["cors_proxy_enabled"] == true);

    const auto got = c.get(proxy_path(base + "/mcp?x=1#frag"),
                           {{"Authorization", "Bearer k1"}, {"X-Llama-Server-Proxy-Header-X-Custom", "abc"},
                            {"x-llama-server-proxy-header-authorization", "Bearer upstream-token"},
                            {"Accept", "application/json, text/event-stream"}});
    CHECK(got.status == 200);
    CHECK(got.json() == json{{"hello", "mcp"}});
    CHECK(got.headers.value_or("Mcp-Session-Id") == "session-7");
    CHECK(got.headers.value_or("Access-Control-Allow-Origin") != "https://elsewhere.example");

    const std::string rpc = R"({"jsonrpc":"2.0","id":1,"method":"initialize"})";
    const auto posted = c.post(proxy_path(base + "/mcp"), rpc, {{"Authorization", "Bearer k1"}});
    CHECK(posted.status == 201);
    CHECK(posted.json()["echo"]["method"] == "initialize");

    const auto empty = c.post(proxy_path(base + "/empty"), "{}", {{"X-Api-Key", "k1"}});
    CHECK(empty.status == 204);
    CHECK(empty.body.empty());

    const auto seen = up.seen();
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].method == "GET");
    CHECK(seen[0].target == "/mcp?x=1");
    CHECK(seen[0].has_header("X-Custom: abc"));
    CHECK(seen[0].has_header("Accept: application/json, text/event-stream"));
    CHECK(seen[0].has_header("authorization: Bearer upstream-token"));  // the wrapped one, unwrapped
    CHECK(!seen[0].has_header("Bearer k1"));                             // never this server's key
    CHECK(seen[0].has_header("Host: 127.0.0.1:" + std::to_string(up.port())));
    CHECK(seen[1].method == "POST");
    CHECK(seen[1].body == rpc);
    CHECK(seen[1].has_header("Content-Type: application/json"));
    CHECK(!seen[2].has_header("k1"));
}

TEST_CASE("cors proxy: an event stream is passed on as it arrives", "[integration][cors-proxy][cors-stream]") {
    std::promise<void> first_seen;
    auto first_seen_future = first_seen.get_future();
    Upstream up([&](tcp::socket& s, const Seen&) {
        write(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
                     chunk("event: message\ndata: {\"id\":1}\n\n"));
        // The second event waits until the client has received the first through the proxy: a proxy that
        // buffered the answer would never pass the first on.
        if (first_seen_future.wait_for(std::chrono::seconds(30)) != std::future_status::ready) return;
        write(s, chunk("data: {\"id\":2}\n\n") + "0\r\n\r\n");
    });
    ServerProcess s(small_stories_args({"--webui-mcp-proxy"}));
    server::http::ClientOptions co;
    co.timeout = std::chrono::seconds(20);
    Client c("127.0.0.1", s.port(), co);
    c.send_raw("GET " + proxy_path("http://127.0.0.1:" + std::to_string(up.port()) + "/sse") +
               " HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n");
    const std::string head = c.read_until("data: {\"id\":1}\n\n");
    CHECK(head.find("HTTP/1.1 200") == 0);
    CHECK(head.find("Content-Type: text/event-stream") != std::string::npos);
    CHECK(head.find("data: {\"id\":2}") == std::string::npos);
    first_seen.set_value();
    const std::string rest = c.read_until("0\r\n\r\n");
    CHECK(rest.find("data: {\"id\":2}\n\n") != std::string::npos);
}

TEST_CASE("cors proxy: bad targets are 400, unreachable ones 502, a silent one ends in 504", "[integration][cors-proxy][cors-bad]") {
    Upstream up([](tcp::socket&, const Seen&) {});
    ServerProcess s(small_stories_args({"--ui-mcp-proxy", "--timeout", "1"}));
    Client c("127.0.0.1", s.port());
    CHECK(c.get("/cors-proxy").status == 400);
    for (const char* bad : {"", "not-a-url", "ftp://127.0.0.1/", "http://user:pw@127.0.0.1/", "http://@127.0.0.1/",
                            "http:///path", "http://127.0.0.1:0/", "http://127.0.0.1:65536/", "http://127.0.0.1:x/",
                            "http://[::1", "http://[::1]x/", "http://a b/", "http://127.0.0.1/\r\nX: y"}) {
        INFO(bad);
        const auto r = c.get(proxy_path(bad));
        CHECK(r.status == 400);
        CHECK(r.json()["error"]["message"].is_string());
    }
    const auto https = c.get(proxy_path("https://127.0.0.1:1/"));
    CHECK(https.status == 502);
    CHECK(https.json()["error"]["message"].get<std::string>().find("https") != std::string::npos);
    // Port 1 on the loopback interface: nothing listens there.
    const auto refused = c.get(proxy_path("http://127.0.0.1:1/"));
    CHECK(refused.status == 502);
    CHECK(refused.json()["error"]["message"].get<std::string>().find("cannot reach") != std::string::npos);
    const auto t0 = std::chrono::steady_clock::now();
    const auto silent = c.post(proxy_path("http://127.0.0.1:" + std::to_string(up.port()) + "/hang"), "{}");
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(silent.status == 504);
    CHECK(waited < 15.0);  // --timeout 1 bounds the wait for the answer
}
