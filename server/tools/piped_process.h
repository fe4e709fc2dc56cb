// A long-lived child process with pipes to its stdin, stdout and stderr (an MCP server): posix_spawnp (no
// shell) in a new process group, every signal at its default action and none blocked. The parent's ends
// are non-blocking and close-on-exec. The destructor kills the whole group (SIGKILL) and reaps the child,
// so nothing it started outlives it and nothing is left a zombie. (run_process in subprocess.h is the
// one-shot variant for commands.)
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace tools {

class PipedProcess {
  public:
    // Throws std::runtime_error saying why it could not start (no such program, a bad cwd).
    // `env` is laid over this process's environment.
    PipedProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                 const std::string& cwd);
    ~PipedProcess();
    PipedProcess(const PipedProcess&) = delete;
    PipedProcess& operator=(const PipedProcess&) = delete;

    pid_t pid() const { return pid_; }
    int stdout_fd() const { return out_; }
    int stderr_fd() const { return err_; }

    // Writes all of `data` to the child's stdin, waiting (poll) for room until `deadline`. False when the
    // deadline passed or the child closed its stdin (the error in `error`).
    bool write_all(const std::string& data, std::chrono::steady_clock::time_point deadline, std::string& error);

    // Closes the child's stdin: a child that reads it to its end sees the end.
    void close_stdin();
    // SIGKILL to the process group (the child and whatever it started).
    void kill_group();
    // "exit status N" / "killed by signal N" once the child has ended (reaped without blocking), else "".
    std::string exit_description();
    // The same, first waiting up to `wait` for the child to end (it closed its output: it is exiting).
    std::string wait_exit(std::chrono::milliseconds wait);

  private:
    pid_t pid_ = -1;
    int in_ = -1, out_ = -1, err_ = -1;
    bool reaped_ = false;
    int status_ = 0;
};

}  // namespace tools
