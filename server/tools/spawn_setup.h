// What every child a tool starts gets (run_process, PipedProcess): posix_spawn's attributes for its own
// process group (killed as one), no blocked signal (the server's threads block SIGINT and SIGTERM, which
// a child would inherit), every signal at its default action, and its working directory. The file
// actions for its standard streams are the caller's to add. Released however the caller leaves.
#pragma once

#include <signal.h>
#include <spawn.h>

#include <mutex>
#include <string>

namespace tools {

struct SpawnSetup {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    explicit SpawnSetup(const std::string& cwd) {
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attr);
        if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
        sigset_t none, all;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
    }
    ~SpawnSetup() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
    }
    SpawnSetup(const SpawnSetup&) = delete;
    SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// Writing to a pipe whose reader has gone raises SIGPIPE, which would end the whole server: a child can
// exit at any time (an MCP server, a command fed on stdin), so such a write must fail with EPIPE instead.
inline void ignore_sigpipe() {
    static std::once_flag once;
    std::call_once(once, [] { signal(SIGPIPE, SIG_IGN); });
}

}  // namespace tools
