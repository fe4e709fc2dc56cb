#include "server/tools/mcp_client.h"

#include "server/tools/spawn_setup.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tools {

using json = nlohmann::json;

namespace {

constexpr const char* kProtocolVersion = "2024-11-05";  // llama-server's
constexpr size_t kStderrTail = 4096;
constexpr size_t kStderrLine = 16384;  // a longer stderr line is cut in the log
constexpr auto kPollInterval = std::chrono::milliseconds(100);

// Splits a byte stream into lines of at most `max` bytes; longer lines are dropped whole.
struct LineSplitter {
    std::string buf;
    bool skipping = false;  // inside an over-long line, waiting for its end
    size_t dropped = 0;     // over-long lines dropped
    template <class F>
    void feed(const char* data, size_t n, size_t max, F&& on_line) {
        buf.append(data, n);
        size_t start = 0;
        for (;;) {
            const size_t nl = buf.find('\n', start);
            if (nl == std::string::npos) break;
            if (skipping) {
                skipping = false;
            } else {
                std::string line = buf.substr(start, nl - start);
                if (!line.empty() && line.back() == '\r') line.pop_back();
                if (line.size() > max) ++dropped;
                else if (!line.empty()) on_line(line);
            }
            start = nl + 1;
        }
        buf.erase(0, start);
        if (buf.size() > max) {
            if (!skipping) ++dropped;
            skipping = true;
            buf.clear();
        }
    }
};

std::string error_message(const json& e) {
    if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
    return "unknown error";
}

}  // namespace

McpClient::McpClient(const McpServerConfig& config, size_t max_line)
    : name_(config.name), max_line_(max_line), proc_([&] {
          ignore_sigpipe();
          std::vector<std::string> argv = {config.command};
          argv.insert(argv.end(), config.args.begin(), config.args.end());
          return argv;
      }(), config.env, config.cwd) {
    if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
        proc_.kill_group();
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    }
    reader_ = std::thread([this] { read_loop(); });
    spdlog::info("MCP server '{}' started (pid {})", name_, proc_.pid());
}

McpClient::~McpClient() {
    shutdown();
    if (reader_.joinable()) reader_.join();
    for (int f : wake_)
        if (f >= 0) close(f);
    // proc_'s destructor kills the group again and reaps the child.
}

void McpClient::shutdown() {
    close_all();  // first: the reader then takes the end of its output for the shutdown it is
    {
        std::lock_guard<std::mutex> lk(proc_mu_);
        proc_.kill_group();
    }
    const char c = 1;
    [[maybe_unused]] auto r = write(wake_[1], &c, 1);
}

void McpClient::close_all() {
    {
        std::lock_guard<std::mutex> lk(mu_);
        closed_.store(true);
    }
    cv_.notify_all();
}

void McpClient::read_loop() {
    LineSplitter out, err;
    bool out_open = true, err_open = true;
    char buf[65536];
    while (out_open || err_open) {
        pollfd p[3];
        nfds_t n = 0;
        p[n++] = {wake_[0], POLLIN, 0};
        const int i_out = out_open ? (int)n : -1;
        if (out_open) p[n++] = {proc_.stdout_fd(), POLLIN, 0};
        const int i_err = err_open ? (int)n : -1;
        if (err_open) p[n++] = {proc_.stderr_fd(), POLLIN, 0};
        if (poll(p, n, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (p[0].revents) break;  // shut down
        auto drain = [&](int fd, bool& open, LineSplitter& sp, bool is_out) {
            for (;;) {
                const ssize_t r = read(fd, buf, sizeof buf);
                if (r > 0) {
                    const size_t before = sp.dropped;
                    sp.feed(buf, (size_t)r, is_out ? max_line_ : kStderrLine, [&](const std::string& line) {
                        if (is_out) on_line(line);
                        else on_stderr_line(line);
                    });
                    if (is_out && sp.dropped > before)
                        spdlog::warn("MCP server '{}': dropped a message line longer than {} bytes", name_, max_line_);
                    continue;
                }
                if (r < 0 && errno == EINTR) continue;
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
                open = false;  // EOF or an error
                return;
            }
        };
        if (i_out >= 0 && p[i_out].revents) drain(proc_.stdout_fd(), out_open, out, true);
        if (i_err >= 0 && p[i_err].revents) drain(proc_.stderr_fd(), err_open, err, false);
        if (!out_open && !closed_.load()) {
            // No reply can come any more. It is most likely exiting: give it a moment, so that the calls
            // that fail now can say how it ended.
            {
                std::lock_guard<std::mutex> lk(proc_mu_);
                proc_.wait_exit(std::chrono::milliseconds(500));
            }
            close_all();
            spdlog::warn("MCP server '{}' closed its output: {}", name_, last_words());
        }
    }
    close_all();
}

void McpClient::on_stderr_line(const std::string& line) {
    spdlog::info("MCP server '{}' stderr: {}", name_, line);
    std::lock_guard<std::mutex> lk(mu_);
    stderr_tail_ += line + "\n";
    if (stderr_tail_.size() > kStderrTail) stderr_tail_.erase(0, stderr_tail_.size() - kStderrTail);
}

void McpClient::on_line(const std::string& line) {
    json msg = json::parse(line, nullptr, false);
    if (msg.is_discarded() || !msg.is_object()) {
        spdlog::debug("MCP server '{}': skipped a line that is not a JSON-RPC message", name_);
        return;
    }
    if (msg.contains("method")) {
        if (!msg.contains("id")) return;  // a notification (progress, logging): nothing to do
        // A request from the server: ping is answered, anything else is not offered (no capabilities).
        json reply = {{"jsonrpc", "2.0"}, {"id", msg["id"]}};
        if (msg["method"] == "ping") reply["result"] = json::object();
        else reply["error"] = {{"code", -32601}, {"message", "method not found"}};
        std::string error;
        write_line(reply.dump(), Clock::now() + std::chrono::seconds(1), error);
        return;
    }
    if (!msg.contains("id") || !msg["id"].is_number_integer()) {
        spdlog::debug("MCP server '{}': skipped a reply without a request id of ours", name_);
        return;
    }
    const int64_t id = msg["id"].get<int64_t>();
    {
        std::lock_guard<std::mutex> lk(mu_);
        const auto it = pending_.find(id);
        if (it == pending_.end()) {
            spdlog::debug("MCP server '{}': dropped a reply to request {}, which no longer waits", name_, id);
            return;
        }
        it->second->done = true;
        it->second->reply = std::move(msg);
        pending_.erase(it);
    }
    cv_.notify_all();
}

bool McpClient::write_line(const std::string& line, Clock::time_point deadline, std::string& error) {
    std::lock_guard<std::mutex> lk(write_mu_);
    return proc_.write_all(line + "\n", deadline, error);
}

RpcReply McpClient::request(const std::string& method, const json& params, Clock::time_point deadline,
                            const std::function<bool()>& cancelled) {
    RpcReply out;
    const int64_t id = next_id_.fetch_add(1);
    auto slot = std::make_shared<Pending>();
    {
        std::lock_guard<std::mutex> lk(mu_);
        if (closed_.load()) {
            out.message = "transport closed";
            return out;
        }
        pending_[id] = slot;
    }
    json req = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) req["params"] = params;
    auto forget = [&] {
        std::lock_guard<std::mutex> lk(mu_);
        pending_.erase(id);
    };
    std::string error;
    if (!write_line(req.dump(), deadline, error)) {
        forget();
        out.kind = Clock::now() >= deadline ? RpcReply::Kind::Timeout : RpcReply::Kind::Closed;
        out.message = out.kind == RpcReply::Kind::Timeout ? "request timed out" : "transport closed: " + error;
        return out;
    }
    std::unique_lock<std::mutex> lk(mu_);
    while (!slot->done) {
        if (closed_.load()) {
            pending_.erase(id);
            out.kind = RpcReply::Kind::Closed;
            out.message = "transport closed";
            return out;
        }
        bool stop = false;
        if (cancelled) {
            lk.unlock();  // the caller's check may take its own locks
            stop = cancelled();
            lk.lock();
            if (slot->done) break;
        }
        const auto now = Clock::now();
        if (stop || now >= deadline) {
            pending_.erase(id);
            lk.unlock();
            out.kind = stop ? RpcReply::Kind::Cancelled : RpcReply::Kind::Timeout;
            out.message = stop ? "cancelled" : "request timed out";
            // Tell the server to stop working on it (MCP's cancellation); its late reply is dropped.
            notify("notifications/cancelled", {{"requestId", id}, {"reason", out.message}});
            return out;
        }
        cv_.wait_until(lk, std::min(deadline, now + kPollInterval));
    }
    const json& r = slot->reply;
    if (r.contains("error")) {
        out.kind = RpcReply::Kind::Error;
        out.message = error_message(r["error"]);
    } else if (r.contains("result")) {
        out.kind = RpcReply::Kind::Result;
        out.result = r["result"];
    } else {
        out.kind = RpcReply::Kind::Error;
        out.message = "invalid response from MCP server";
    }
    return out;
}

void McpClient::notify(const std::string& method, const json& params) {
    json msg = {{"jsonrpc", "2.0"}, {"method", method}};
    if (!params.is_null()) msg["params"] = params;
    std::string error;
    write_line(msg.dump(), Clock::now() + std::chrono::seconds(1), error);
}

std::string McpClient::initialize(Clock::time_point deadline, const std::function<bool()>& cancelled) {
    const json params = {{"protocolVersion", kProtocolVersion},
                         {"capabilities", json::object()},
                         {"clientInfo", {{"name", "ggserve"}, {"version", "1.0"}}}};
    const RpcReply r = request("initialize", params, deadline, cancelled);
    if (!r.ok()) return "initialize failed: " + r.message;
    notify("notifications/initialized", nullptr);
    return "";
}

std::vector<McpToolDef> McpClient::list_tools(Clock::time_point deadline) {
    std::vector<McpToolDef> out;
    json cursor;
    for (int page = 0; page < 100; ++page) {
        const RpcReply r = request("tools/list", cursor.is_null() ? json() : json{{"cursor", cursor}}, deadline);
        if (!r.ok()) throw std::runtime_error("tools/list failed: " + r.message);
        if (!r.result.is_object() || !r.result.contains("tools") || !r.result["tools"].is_array())
            throw std::runtime_error("tools/list failed: the result has no \"tools\" array");
        for (const auto& t : r.result["tools"]) {
            if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || t["name"].get<std::string>().empty())
                continue;
            McpToolDef d;
            d.server = name_;
            d.name = t["name"].get<std::string>();
            if (t.contains("description") && t["description"].is_string()) d.description = t["description"];
            if (t.contains("inputSchema")) d.input_schema = t["inputSchema"];
            out.push_back(std::move(d));
        }
        if (!r.result.contains("nextCursor") || r.result["nextCursor"].is_null()) break;
        cursor = r.result["nextCursor"];
    }
    return out;
}

std::string McpClient::last_words() {
    std::string s;
    {
        std::lock_guard<std::mutex> lk(proc_mu_);
        s = proc_.exit_description();
    }
    if (s.empty()) s = "running";
    std::lock_guard<std::mutex> lk(mu_);
    if (!stderr_tail_.empty()) {
        std::string tail = stderr_tail_;
        while (!tail.empty() && tail.back() == '\n') tail.pop_back();
        s += "; last stderr: " + tail;
    }
    return s;
}

}  // namespace tools
