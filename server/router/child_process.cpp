#include "server/router/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace router {

namespace {

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, int out_fd, int null_fd, pid_t parent,
                             long max_fd) {
    // The router blocks SIGINT/SIGTERM for its signal thread; a server starts with the defaults.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    // Dies with the router. The signal comes when the thread that forked ends, so the router forks from
    // a thread that outlives the child (the model's lifecycle thread).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the router died before prctl
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(out_fd, 2);
    // Nothing else of the router's: its listening socket, other children's pipes (whose end of file would
    // never come while this child held them).
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
#endif
        for (long fd = 3; fd < max_fd; ++fd) close((int)fd);
    execve(argv[0], argv, envp);
    _exit(127);
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                           Callbacks callbacks)
    : callbacks_(std::move(callbacks)) {
    if (argv.empty()) throw std::runtime_error("no program to start");
    std::vector<std::string> args = argv, envs = env;
    std::vector<char*> argp, envp;
    for (auto& a : args) argp.push_back(a.data());
    argp.push_back(nullptr);
    for (auto& e : envs) envp.push_back(e.data());
    envp.push_back(nullptr);
    if (access(argv[0].c_str(), X_OK) != 0)
        throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(errno));

    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0) {
        close(out[0]);
        close(out[1]);
        throw std::runtime_error(std::string("/dev/null: ") + std::strerror(errno));
    }
    long max_fd = sysconf(_SC_OPEN_MAX);
    if (max_fd <= 0 || max_fd > 65536) max_fd = 65536;
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) exec_child(argp.data(), envp.data(), out[1], null_fd, parent, max_fd);
    const int fork_errno = errno;
    close(out[1]);
    close(null_fd);
    if (pid_ < 0) {
        close(out[0]);
        throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
    }
    reader_ = std::thread([this, fd = out[0]] { read_output(fd); });
}

ChildProcess::~ChildProcess() {
    kill();
    if (reader_.joinable()) reader_.join();
}

void ChildProcess::read_output(int fd) {
    std::string pending;
    char buf[4096];
    for (;;) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        pending.append(buf, (size_t)n);
        size_t start = 0;
        for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
            if (callbacks_.on_line) callbacks_.on_line(pending.substr(start, nl - start));
        }
        pending.erase(0, start);
    }
    if (!pending.empty() && callbacks_.on_line) callbacks_.on_line(pending);
    close(fd);
    // Wait for the end without reaping, then reap under the lock: kill() never signals a reused pid.
    siginfo_t info{};
    while (waitid(P_PID, (id_t)pid_, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    {
        std::lock_guard lk(mu_);
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        status_ = status;
        exited_ = true;
    }
    cv_.notify_all();
    if (callbacks_.on_exit) callbacks_.on_exit();
}

void ChildProcess::terminate() {
    std::lock_guard lk(mu_);
    if (!exited_ && pid_ > 0) ::kill(pid_, SIGTERM);
}

void ChildProcess::kill() {
    std::lock_guard lk(mu_);
    if (!exited_ && pid_ > 0) ::kill(pid_, SIGKILL);
}

bool ChildProcess::exited() const {
    std::lock_guard lk(mu_);
    return exited_;
}

bool ChildProcess::wait_exit(std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, timeout, [this] { return exited_; });
}

int ChildProcess::exit_code() const {
    std::lock_guard lk(mu_);
    if (!exited_) return -1;
    if (WIFEXITED(status_)) return WEXITSTATUS(status_);
    if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
    return -1;
}

std::string ChildProcess::exit_description() const {
    std::lock_guard lk(mu_);
    if (!exited_) return "running";
    if (WIFEXITED(status_)) return "exit status " + std::to_string(WEXITSTATUS(status_));
    if (WIFSIGNALED(status_)) {
        const int sig = WTERMSIG(status_);
        const char* name = sigabbrev_np(sig);
        return "signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
    }
    return "unknown status";
}

}  // namespace router
