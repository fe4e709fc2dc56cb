#include "server/tools/tools_runtime.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tools {

namespace {

// What the container's shell runs: it says it is up, then reads its stdin to the end and exits.
constexpr const char* kHoldScript = "echo ggserve-tools-ready; while read -r _; do :; done";
constexpr const char* kReadyLine = "ggserve-tools-ready";

// Reads fd (non-blocking) until `line` arrives on it, the fd ends, or the deadline; what was read goes
// into `seen` (for the error message).
bool wait_for_line(int fd, const std::string& line, std::chrono::steady_clock::time_point deadline,
                   std::string& seen) {
    for (;;) {
        char buf[4096];
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            seen.append(buf, (size_t)n);
            if (seen.find(line + "\n") != std::string::npos) return true;
            if (seen.size() > 65536) seen.erase(0, seen.size() - 65536);
            continue;
        }
        if (n == 0) return false;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) return false;
        pollfd p{fd, POLLIN, 0};
        poll(&p, 1, (int)std::chrono::ceil<std::chrono::milliseconds>(left).count());
    }
}

std::string read_available(int fd) {
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0 && out.size() < 65536;) out.append(buf, (size_t)n);
    return out;
}

}  // namespace

ToolsRuntime::ToolsRuntime(const std::string& spec, std::chrono::seconds start_timeout)
    : spec_(spec), start_timeout_(start_timeout) {
    if (spec_.empty()) {
        io_ = host_io_shared();
        return;
    }
    parsed_ = parse_runtime_spec(spec_);
    if (parsed_.kind != RuntimeSpec::Kind::spawn) {
        io_ = make_isolate_io(parsed_);
        return;
    }
    std::lock_guard lock(mu_);
    start_container();
}

ToolsRuntime::~ToolsRuntime() {
    std::lock_guard lock(mu_);
    if (!client_) return;
    // The container's shell sees the end of its stdin and exits; `run --rm` then removes it and returns.
    client_->close_stdin();
    if (client_->wait_exit(std::chrono::seconds(10)).empty())
        spdlog::warn("tools runtime: container {} did not stop within 10 s; its client is killed", container_id_);
}

void ToolsRuntime::start_container() {
    client_.reset();
    // A fresh directory for the id file: `run --cidfile` refuses a file that exists.
    std::string dir = (std::filesystem::temp_directory_path() / "ggserve-tools-runtime-XXXXXX").string();
    if (!mkdtemp(dir.data())) throw std::runtime_error("tools runtime: cannot make a temporary directory");
    const std::string cidfile = dir + "/cid";
    struct Cleanup {
        std::string dir;
        ~Cleanup() {
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    } cleanup{dir};

    const std::vector<std::string> argv = {parsed_.engine, "run", "--rm", "-i", "--cidfile", cidfile,
                                           parsed_.arg, "sh", "-c", kHoldScript};
    try {
        client_ = std::make_unique<PipedProcess>(argv, std::map<std::string, std::string>{}, "");
    } catch (const std::exception& e) {
        throw std::runtime_error("tools runtime: cannot run " + parsed_.engine + ": " + e.what());
    }
    std::string seen;
    const bool ready =
        wait_for_line(client_->stdout_fd(), kReadyLine, std::chrono::steady_clock::now() + start_timeout_, seen);
    std::string cid;
    if (ready) std::getline(std::ifstream(cidfile) >> std::ws, cid);
    if (!ready || cid.empty()) {
        client_->kill_group();
        const std::string status = client_->wait_exit(std::chrono::seconds(5));
        const std::string err = trimmed_output(read_available(client_->stderr_fd()));
        client_.reset();
        throw std::runtime_error("tools runtime: the " + parsed_.engine + " container of image \"" + parsed_.arg +
                                 "\" did not start" + (ready ? " (no container id)" : "") +
                                 (status.empty() ? " within " + std::to_string(start_timeout_.count()) + " s" : " (" + status + ")") +
                                 (err.empty() ? "" : ": " + err));
    }
    container_id_ = cid;
    RuntimeSpec attach;
    attach.kind = RuntimeSpec::Kind::container;
    attach.engine = parsed_.engine;
    attach.arg = cid;
    attach.text = parsed_.engine + "-container:" + cid;
    io_ = make_isolate_io(attach);
    spdlog::info("tools runtime: the tools run in {} container {} (image {})", parsed_.engine, cid.substr(0, 12),
                 parsed_.arg);
}

std::shared_ptr<const ToolIo> ToolsRuntime::io() {
    std::lock_guard lock(mu_);
    if (client_) {
        const std::string ended = client_->exit_description();
        if (!ended.empty()) {
            spdlog::warn("tools runtime: container {} ended ({}); starting a new one", container_id_.substr(0, 12),
                         ended);
            start_container();
        }
    }
    return io_;
}

std::string ToolsRuntime::container() const {
    std::lock_guard lock(mu_);
    return client_ ? parsed_.engine + "-container:" + container_id_ : "";
}

}  // namespace tools
