// Starts the real ggserve binary on 127.0.0.1 with an ephemeral port and waits for its "ready" log
// line (no sleeps: a reader thread wakes the waiter when the line arrives).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ggserve_binary.h"

extern char** environ;

// Servers still running when a test binary dies (an abort, an uncaught exception, a crash) are killed
// from the signal handler: static ServerProcess objects are never destroyed on those paths, and an
// orphaned server would keep running and hold the test runner's output open. Catch2 chains to the
// handler installed here after reporting the failure.
namespace server_reaper {
inline constexpr size_t kSlots = 256;
inline std::atomic<pid_t> live[kSlots];

inline void on_fatal_signal(int sig) {
    for (auto& p : live) {
        const pid_t pid = p.load();
        if (pid > 0) kill(pid, SIGKILL);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

inline bool install() {
    for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT}) {
        struct sigaction old = {};
        sigaction(sig, nullptr, &old);
        if (old.sa_handler != SIG_DFL) continue;  // someone else's: leave it
        struct sigaction sa = {};
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, nullptr);
    }
    return true;
}
inline const bool installed = install();

inline void add(pid_t pid) {
    for (auto& p : live) {
        pid_t empty = 0;
        if (p.compare_exchange_strong(empty, pid)) return;
    }
}
inline void remove(pid_t pid) {
    for (auto& p : live) {
        pid_t expected = pid;
        if (p.compare_exchange_strong(expected, 0)) return;
    }
}
}  // namespace server_reaper

class ServerProcess {
  public:
    // Ready: the model is loaded ("ready:" logged). Listening: the HTTP port is open (the model may still
    // be loading). Nothing: return at once (a server that logs elsewhere, e.g. --log-disable).
    enum class WaitFor { Ready, Listening, Nothing };

    // env: "NAME=VALUE" entries added to (or replacing in) this process's environment for the server.
    explicit ServerProcess(std::vector<std::string> args,
                           std::chrono::seconds timeout = std::chrono::seconds(60),
                           WaitFor wait_for = WaitFor::Ready, std::vector<std::string> env = {})
        : wait_for_(wait_for) {
        int err_pipe[2];
        if (pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
        std::vector<std::string> argv_s = {ggserve_binary(), "serve", "--port", "0"};
        argv_s.insert(argv_s.end(), args.begin(), args.end());
        std::vector<std::string> env_s = merged_env(env);
        std::vector<char*> envp;
        for (auto& e : env_s) envp.push_back(e.data());
        envp.push_back(nullptr);
        pid_ = fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            // stdout too: a server must not hold the test runner's output open
            dup2(err_pipe[1], 1);
            dup2(err_pipe[1], 2);
            close(err_pipe[0]);
            close(err_pipe[1]);
            std::vector<char*> argv;
            for (auto& a : argv_s) argv.push_back(a.data());
            argv.push_back(nullptr);
            execve(argv[0], argv.data(), envp.data());
            _exit(127);
        }
        server_reaper::add(pid_);
        close(err_pipe[1]);
        fd_ = err_pipe[0];
        reader_ = std::thread([this] { read_log(); });
        bool ok;
        {
            std::unique_lock<std::mutex> lk(mu_);
            ok = cv_.wait_for(lk, timeout, [&] { return reached() || eof_; }) && reached();
        }
        if (!ok) {
            const std::string log_text = log();
            stop();
            throw std::runtime_error("server did not become ready:\n" + log_text);
        }
    }
    ~ServerProcess() { stop(); }

    uint16_t port() const { return port_; }
    pid_t pid() const { return pid_; }
    std::string log() const {
        std::lock_guard<std::mutex> lk(mu_);
        return log_;
    }
    // Waits until the log contains `needle`: the log reaches us through a pipe read by another thread, so a
    // line the server wrote before a state change a test observed over HTTP may not have arrived yet.
    bool wait_log(const std::string& needle, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        std::unique_lock<std::mutex> lk(mu_);
        return cv_.wait_for(lk, timeout, [&] { return log_.find(needle) != std::string::npos || eof_; }) &&
               log_.find(needle) != std::string::npos;
    }
    // SIGTERM and wait; returns the exit status (or -1 if killed by a signal).
    int stop() {
        if (pid_ > 0) {
            kill(pid_, SIGTERM);
            int status = 0;
            waitpid(pid_, &status, 0);
            server_reaper::remove(pid_);
            pid_ = -1;
            exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        if (reader_.joinable()) reader_.join();
        if (fd_ >= 0) close(fd_), fd_ = -1;
        return exit_code_;
    }
    bool alive() const { return pid_ > 0 && kill(pid_, 0) == 0; }
    // Waits for the process to end by itself; returns its exit status (-1 if killed by a signal).
    int wait_exit() {
        if (pid_ > 0) {
            int status = 0;
            waitpid(pid_, &status, 0);
            server_reaper::remove(pid_);
            pid_ = -1;
            exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        if (reader_.joinable()) reader_.join();
        return exit_code_;
    }

  private:
    static std::vector<std::string> merged_env(const std::vector<std::string>& extra) {
        const auto name = [](const std::string& e) { return e.substr(0, e.find('=')); };
        std::vector<std::string> out;
        for (char** e = environ; *e; ++e) {
            const std::string cur = *e;
            bool replaced = false;
            for (const auto& x : extra) replaced = replaced || name(x) == name(cur);
            if (!replaced) out.push_back(cur);
        }
        out.insert(out.end(), extra.begin(), extra.end());
        return out;
    }

    bool reached() const {
        return wait_for_ == WaitFor::Nothing ? true : wait_for_ == WaitFor::Ready ? ready_ : port_ != 0;
    }

    void read_log() {
        char buf[4096];
        static const std::regex port_re("listening on https?://[^:]+:(\\d+)");
        for (;;) {
            const ssize_t n = read(fd_, buf, sizeof buf);
            std::lock_guard<std::mutex> lk(mu_);
            if (n <= 0) {
                eof_ = true;
                cv_.notify_all();
                return;
            }
            log_.append(buf, (size_t)n);
            std::smatch m;
            if (!port_ && std::regex_search(log_, m, port_re)) port_ = (uint16_t)std::stoi(m[1]);
            if (port_ && log_.find("ready:") != std::string::npos) ready_ = true;
            cv_.notify_all();
        }
    }

    WaitFor wait_for_;
    pid_t pid_ = -1;
    int fd_ = -1;
    std::thread reader_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::string log_;
    uint16_t port_ = 0;
    bool ready_ = false, eof_ = false;
    int exit_code_ = -1;
};

inline std::string shared_path(const std::string& rel) {
    return std::string(GGSERVE_SHARED_DIR) + "/" + rel;
}
inline std::string stories_model() {
    return shared_path("models/stories260K.gguf");
}
// The reference greedy completions of stories260K (../shared/golden).
inline nlohmann::json stories_golden() {
    std::ifstream f(shared_path("golden/stories260K.greedy.json"));
    return nlohmann::json::parse(f);
}

// `serve` arguments for a small stories260K server (one slot, 512 cells, one thread), then `more`.
inline std::vector<std::string> small_stories_args(std::initializer_list<std::string> more) {
    std::vector<std::string> a = {"-m", stories_model(), "-np", "1", "-c", "512", "-t", "1"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}
