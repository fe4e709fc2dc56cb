// --log-prompts-dir (llama-server's): the prompt of every generation request, as the model reads it (the
// chat template applied), in a plain-text file of its own named after the milliseconds since the server
// started ("000000006048.txt"), so that prompts can be compared with diff (why a prompt cache missed).
// The directory must exist (checked at startup). A file that cannot be written is logged; the request goes
// on. Files are created new (never over an existing one: the next free millisecond) and readable by the
// server's user only, since prompts are private.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

namespace api {

class PromptLog {
  public:
    explicit PromptLog(std::string dir);
    // The file's path, or "" when it could not be written.
    std::string write(std::string_view prompt);

  private:
    const std::string dir_;
    const std::chrono::steady_clock::time_point start_;
    std::mutex mu_;  // one file name at a time
};

}  // namespace api
