#include "server/tools/piped_process.h"

#include "server/tools/spawn_setup.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace tools {

namespace {

struct Pipe {
    int fd[2] = {-1, -1};
    Pipe() {
        if (pipe2(fd, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    }
    ~Pipe() {
        for (int f : fd)
            if (f >= 0) close(f);
    }
    int take(int i) {
        const int f = fd[i];
        fd[i] = -1;
        return f;
    }
};

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

PipedProcess::PipedProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                           const std::string& cwd) {
    if (argv.empty() || argv[0].empty()) throw std::runtime_error("no program to run");
    Pipe in, out, err;
    SpawnSetup s(cwd);
    posix_spawn_file_actions_adddup2(&s.actions, in.fd[0], 0);
    posix_spawn_file_actions_adddup2(&s.actions, out.fd[1], 1);
    posix_spawn_file_actions_adddup2(&s.actions, err.fd[1], 2);

    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) {
        const std::string kv = *e;
        if (!env.count(kv.substr(0, kv.find('=')))) env_s.push_back(kv);
    }
    for (const auto& [k, v] : env) env_s.push_back(k + "=" + v);
    std::vector<char*> envp, args;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = posix_spawnp(&pid_, args[0], &s.actions, &s.attr, args.data(), envp.data());
    if (rc != 0) {
        pid_ = -1;
        throw std::runtime_error("cannot run '" + argv[0] + "'" + (cwd.empty() ? "" : " in '" + cwd + "'") + ": " +
                                 std::strerror(rc));
    }
    in_ = in.take(1);
    out_ = out.take(0);
    err_ = err.take(0);
    for (int f : {in_, out_, err_}) set_nonblocking(f);
}

PipedProcess::~PipedProcess() {
    kill_group();
    if (!reaped_ && pid_ > 0) {
        pid_t r;
        do r = waitpid(pid_, &status_, 0);
        while (r < 0 && errno == EINTR);
        reaped_ = true;
    }
    for (int f : {in_, out_, err_})
        if (f >= 0) close(f);
}

bool PipedProcess::write_all(const std::string& data, std::chrono::steady_clock::time_point deadline,
                             std::string& error) {
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = write(in_, data.data() + done, data.size() - done);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            error = errno == EPIPE ? "the MCP server closed its stdin" : std::string("write: ") + std::strerror(errno);
            return false;
        }
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) {
            error = "request timed out (the MCP server does not read its stdin)";
            return false;
        }
        pollfd p{in_, POLLOUT, 0};
        const int ms = (int)std::chrono::ceil<std::chrono::milliseconds>(left).count();
        if (poll(&p, 1, ms) < 0 && errno != EINTR) {
            error = std::string("poll: ") + std::strerror(errno);
            return false;
        }
    }
    return true;
}

void PipedProcess::close_stdin() {
    if (in_ >= 0) close(in_);
    in_ = -1;
}

void PipedProcess::kill_group() {
    if (pid_ <= 0) return;
    // Even after the child is reaped: what it started may still be in its group (a group's id is not
    // reused while the group has members).
    kill(-pid_, SIGKILL);
    if (!reaped_) kill(pid_, SIGKILL);  // in case it left its group
}

std::string PipedProcess::wait_exit(std::chrono::milliseconds wait) {
    std::string s = exit_description();
    if (!s.empty() || pid_ <= 0) return s;
    const auto deadline = std::chrono::steady_clock::now() + wait;
#ifdef SYS_pidfd_open
    const long fd = syscall(SYS_pidfd_open, pid_, 0);
    if (fd >= 0) {
        pollfd p{(int)fd, POLLIN, 0};
        int r;
        do r = poll(&p, 1, (int)wait.count());
        while (r < 0 && errno == EINTR && std::chrono::steady_clock::now() < deadline);
        close((int)fd);
        return exit_description();
    }
#endif
    // No pidfd: look again at short intervals until the deadline.
    while (s.empty() && std::chrono::steady_clock::now() < deadline) {
        poll(nullptr, 0, 10);
        s = exit_description();
    }
    return s;
}

std::string PipedProcess::exit_description() {
    if (!reaped_ && pid_ > 0) {
        pid_t r;
        do r = waitpid(pid_, &status_, WNOHANG);
        while (r < 0 && errno == EINTR);
        if (r == pid_) reaped_ = true;
    }
    if (!reaped_) return "";
    if (WIFEXITED(status_)) return "exit status " + std::to_string(WEXITSTATUS(status_));
    if (WIFSIGNALED(status_)) return "killed by signal " + std::to_string(WTERMSIG(status_));
    return "ended";
}

}  // namespace tools
