#include "server/api/prompt_log.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace api {

PromptLog::PromptLog(std::string dir) : dir_(std::move(dir)), start_(std::chrono::steady_clock::now()) {}

std::string PromptLog::write(std::string_view prompt) {
    std::lock_guard lk(mu_);
    int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count();
    for (int tries = 0; tries < 1000; ++tries, ++ms) {
        char name[32];
        std::snprintf(name, sizeof name, "/%012" PRId64 ".txt", ms);
        const std::string path = dir_ + name;
        const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
            if (errno == EEXIST) continue;  // two prompts in one millisecond: the next one
            spdlog::warn("--log-prompts-dir: cannot write {}: {}", path, std::strerror(errno));
            return "";
        }
        size_t done = 0;
        while (done < prompt.size()) {
            const ssize_t n = ::write(fd, prompt.data() + done, prompt.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                spdlog::warn("--log-prompts-dir: cannot write {}: {}", path, std::strerror(errno));
                close(fd);
                return "";
            }
            done += (size_t)n;
        }
        close(fd);
        return path;
    }
    spdlog::warn("--log-prompts-dir: no free file name in {}", dir_);
    return "";
}

}  // namespace api
