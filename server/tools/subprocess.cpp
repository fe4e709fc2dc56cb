#include "server/tools/subprocess.h"

#include "server/tools/spawn_setup.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace tools {

namespace {

using Clock = std::chrono::steady_clock;

int exit_code_of(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

// A pidfd (readable once the child has exited), or -1 where the kernel has none: then the child is
// polled with waitpid(WNOHANG) at each wake-up.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    const long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd < 0 ? -1 : (int)fd;
#else
    (void)pid;
    return -1;
#endif
}

}  // namespace

std::string trimmed_output(std::string_view s) {
    const size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return "";
    return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
    ProcessResult res;
    if (argv.empty()) {
        res.spawn_error = "no program to run";
        return res;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        res.spawn_error = std::string("pipe: ") + std::strerror(errno);
        return res;
    }
    int in_fds[2] = {-1, -1};
    if (options.stdin_data) ignore_sigpipe();
    if (options.stdin_data && pipe2(in_fds, O_CLOEXEC) != 0) {
        close(fds[0]);
        close(fds[1]);
        res.spawn_error = std::string("pipe: ") + std::strerror(errno);
        return res;
    }
    SpawnSetup s(options.cwd);
    if (options.stdin_data) posix_spawn_file_actions_adddup2(&s.actions, in_fds[0], 0);
    else posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&s.actions, fds[1], 1);
    if (options.merge_stderr) posix_spawn_file_actions_adddup2(&s.actions, fds[1], 2);
    else posix_spawn_file_actions_addopen(&s.actions, 2, "/dev/null", O_WRONLY, 0);

    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int err = posix_spawnp(&pid, args[0], &s.actions, &s.attr, args.data(), environ);
    close(fds[1]);
    if (in_fds[0] >= 0) close(in_fds[0]);
    if (err != 0) {
        close(fds[0]);
        if (in_fds[1] >= 0) close(in_fds[1]);
        res.spawn_error = "cannot run '" + argv[0] + "': " + std::strerror(err);
        return res;
    }
    const int out = fds[0];
    fcntl(out, F_SETFL, fcntl(out, F_GETFL) | O_NONBLOCK);
    // The child's stdin: written as it takes it, between reads of its output (a child that writes
    // before it has read everything must not block us both), and closed once all is written.
    int in = in_fds[1];
    size_t in_done = 0;
    if (in >= 0) {
        fcntl(in, F_SETFL, fcntl(in, F_GETFL) | O_NONBLOCK);
        if (options.stdin_data->empty()) close(in), in = -1;
    }
    bool stopped_by_reader = false;
    const int pidfd = open_pidfd(pid);

    const auto deadline = Clock::now() + options.timeout;
    bool pipe_open = true, alive = true;
    int status = 0;
    char buf[16384];
    auto reap_if_done = [&](bool block) {
        if (!alive) return;
        pid_t r;
        do r = waitpid(pid, &status, block ? 0 : WNOHANG);
        while (r < 0 && errno == EINTR);
        if (r == pid || r < 0) alive = false;
    };
    auto drain = [&] {
        for (;;) {
            const ssize_t n = read(out, buf, sizeof buf);
            if (n > 0) {
                const size_t room = options.max_output - std::min(options.max_output, res.output.size());
                const size_t kept = std::min(room, (size_t)n);
                res.output.append(buf, kept);
                if ((size_t)n > room) res.truncated = true;
                if (kept > 0 && options.on_output && !stopped_by_reader &&
                    !options.on_output(std::string_view(buf, kept)))
                    stopped_by_reader = true;
                continue;
            }
            if (n == 0) pipe_open = false;  // every writer has closed it
            else if (errno == EINTR) continue;
            else if (errno != EAGAIN && errno != EWOULDBLOCK) pipe_open = false;
            return;
        }
    };
    auto feed = [&] {
        while (in >= 0 && in_done < options.stdin_data->size()) {
            const ssize_t n = write(in, options.stdin_data->data() + in_done, options.stdin_data->size() - in_done);
            if (n > 0) {
                in_done += (size_t)n;
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
            break;  // the child closed its stdin (EPIPE): what it did not take is dropped
        }
        if (in >= 0) close(in), in = -1;
    };
    feed();
    while (pipe_open || alive) {
        const auto now = Clock::now();
        const bool cancelled = stopped_by_reader || (options.cancelled && options.cancelled());
        if (now >= deadline || cancelled) {
            (cancelled ? res.cancelled : res.timed_out) = true;
            kill(-pid, SIGKILL);  // the group: the shell and whatever it started
            if (alive) kill(pid, SIGKILL);
            break;
        }
        // Wake at least a few times a second to see a cancelled call.
        const auto wait = std::min<Clock::duration>(deadline - now, std::chrono::milliseconds(250));
        pollfd pf[3];
        nfds_t n = 0;
        if (pipe_open) pf[n++] = {out, POLLIN, 0};
        if (in >= 0) pf[n++] = {in, POLLOUT, 0};
        const bool watch_pid = alive && pidfd >= 0;
        if (watch_pid) pf[n++] = {pidfd, POLLIN, 0};
        // Without a pidfd, a child that closed its output is polled at a short interval.
        const int timeout_ms =
            (int)std::chrono::ceil<std::chrono::milliseconds>(alive && pidfd < 0 && !pipe_open
                                                                  ? std::min<Clock::duration>(wait, std::chrono::milliseconds(20))
                                                                  : wait)
                .count();
        const int r = poll(pf, n, timeout_ms);
        if (r < 0 && errno != EINTR) break;
        if (pipe_open) drain();
        feed();
        reap_if_done(false);
    }
    if (in >= 0) close(in);
    close(out);
    reap_if_done(true);
    if (pidfd >= 0) close(pidfd);
    res.exit_code = exit_code_of(status);
    return res;
}

}  // namespace tools
