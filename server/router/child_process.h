// One child process of the router: a `ggserve serve` for one model. Spawned with its output (stdout and
// stderr) on a pipe that a reader thread copies into the router's log, each line prefixed with the
// model's name; the same thread reaps the process when the pipe closes. The child gets SIGKILL if the
// router dies (PR_SET_PDEATHSIG), so a killed router leaves no model servers behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace router {

class ChildProcess {
  public:
    // Called on the reader thread: for every line of output, and once when the process has ended.
    struct Callbacks {
        std::function<void(const std::string& line)> on_line;
        std::function<void()> on_exit;
    };

    // Starts argv[0] with argv and `env` ("NAME=VALUE" entries, the whole environment). Throws
    // std::runtime_error if the process cannot be started (the executable is missing...). The callbacks
    // must not destroy this object (its destructor joins the thread they run on).
    ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env, Callbacks callbacks);
    // Kills the process if it still runs (SIGKILL), reaps it and joins the reader thread.
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    void terminate();  // SIGTERM: the server's orderly shutdown
    void kill();       // SIGKILL
    bool exited() const;
    // Waits until the process has ended, at most `timeout`; returns whether it has.
    bool wait_exit(std::chrono::milliseconds timeout);
    // Once exited: the exit status, or 128 + the signal that ended it (as a shell reports it).
    int exit_code() const;
    // Once exited: "exit status N" or "signal N (SIGKILL)".
    std::string exit_description() const;

  private:
    void read_output(int fd);

    Callbacks callbacks_;
    pid_t pid_ = -1;
    std::thread reader_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool exited_ = false;
    int status_ = 0;  // waitpid's status
};

}  // namespace router
