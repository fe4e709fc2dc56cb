// Runs a program for a tool: posix_spawnp (no shell of its own: the argv is run as given) in a new
// process group, stdin from /dev/null (or fed `stdin_data` through a pipe, then closed), stdout and
// stderr into one pipe read without blocking up to a deadline. Output beyond the cap is read and dropped (the child never blocks on a full pipe). At the
// deadline, or when the call is cancelled, the whole process group gets SIGKILL. The child is always
// reaped; nothing is left a zombie.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tools {

struct ProcessResult {
    std::string output;      // stdout and stderr as they interleaved, at most max_output bytes
    bool truncated = false;  // more was written than max_output
    int exit_code = -1;      // the exit status; 128 + N for a child killed by signal N; -1 if not started
    bool timed_out = false;  // killed at the deadline
    bool cancelled = false;  // killed because the call was cancelled
    std::string spawn_error;  // why it could not start ("" if it did)
};

struct ProcessOptions {
    std::string cwd;  // "" = the server's working directory
    size_t max_output = 16 * 1024;
    std::chrono::milliseconds timeout{10000};
    std::function<bool()> cancelled;  // polled a few times a second while the child runs
    // Given to the child on its stdin, which is then closed (nullopt: stdin is /dev/null).
    std::optional<std::string> stdin_data;
    // Each piece of output as it is read (only what fits under max_output); returning false kills the
    // child as a cancelled call.
    std::function<bool(std::string_view)> on_output;
    bool merge_stderr = true;  // false: stderr goes to /dev/null (raw file bytes on stdout stay clean)
};

// A command's output without the blanks and newlines around it (uname's line, wc's count, an error message).
std::string trimmed_output(std::string_view output);

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options);

}  // namespace tools
