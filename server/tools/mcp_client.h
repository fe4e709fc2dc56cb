// One connection to a stdio MCP server: its process (PipedProcess) and JSON-RPC 2.0 over newline-
// delimited JSON on its stdin/stdout. One reader thread per connection reads stdout (replies, matched to
// their request by id, so concurrent requests may be answered in any order) and stderr (each line to the
// log, the last few KiB kept to explain a death). Every wait is bounded by a deadline and can be
// cancelled; a reply that comes after its request gave up is dropped. Lines longer than the limit are
// dropped whole, as are lines that are not JSON; a ping from the server is answered, other server
// requests get "method not found".
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "server/tools/mcp_config.h"
#include "server/tools/piped_process.h"

namespace tools {

// A tool an MCP server offers (tools/list).
struct McpToolDef {
    std::string server;  // the config entry's name
    std::string name;    // the server's own name for it
    std::string description;
    nlohmann::json input_schema;  // its JSON Schema (null if it gave none)
};

struct RpcReply {
    enum class Kind { Result, Error, Timeout, Cancelled, Closed } kind = Kind::Closed;
    nlohmann::json result;  // Kind::Result
    std::string message;    // otherwise: why
    bool ok() const { return kind == Kind::Result; }
};

class McpClient {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr size_t kMaxLine = 8 << 20;  // llama-server's bound on one message line

    // Starts the server's process; throws std::runtime_error if it cannot start.
    explicit McpClient(const McpServerConfig& config, size_t max_line = kMaxLine);
    ~McpClient();  // kills the process group, ends the reader, reaps the child
    McpClient(const McpClient&) = delete;
    McpClient& operator=(const McpClient&) = delete;

    // A request and its reply (or why there is none by `deadline`). `cancelled` is polled a few times a
    // second while waiting.
    RpcReply request(const std::string& method, const nlohmann::json& params, Clock::time_point deadline,
                     const std::function<bool()>& cancelled = {});
    // A notification (no reply).
    void notify(const std::string& method, const nlohmann::json& params);

    // MCP's handshake: initialize, then notifications/initialized. "" or why it failed.
    std::string initialize(Clock::time_point deadline, const std::function<bool()>& cancelled = {});
    // tools/list, every page. Throws std::runtime_error saying why it failed.
    std::vector<McpToolDef> list_tools(Clock::time_point deadline);

    // False once its stdout has closed (it exited, or closed it) or it was shut down.
    bool alive() const { return !closed_.load(); }
    // Ends every wait and kills the process group (the destructor still reaps).
    void shutdown();
    // Why it is gone, with the last lines of its stderr ("" while it runs quietly).
    std::string last_words();
    pid_t pid() const { return proc_.pid(); }
    const std::string& name() const { return name_; }

  private:
    struct Pending {
        bool done = false;
        nlohmann::json reply;
    };
    void read_loop();
    void on_line(const std::string& line);
    void on_stderr_line(const std::string& line);
    bool write_line(const std::string& line, Clock::time_point deadline, std::string& error);
    void close_all();

    std::string name_;
    size_t max_line_;
    PipedProcess proc_;
    int wake_[2] = {-1, -1};  // the destructor's nudge to the reader
    std::atomic<bool> closed_{false};
    std::atomic<int64_t> next_id_{1};
    std::mutex write_mu_;
    std::mutex proc_mu_;  // proc_'s exit status
    std::mutex mu_;       // pending_, stderr_tail_
    std::condition_variable cv_;
    std::map<int64_t, std::shared_ptr<Pending>> pending_;
    std::string stderr_tail_;
    std::thread reader_;
};

}  // namespace tools
