#include "server/tools/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tools {

namespace fs = std::filesystem;

std::optional<uintmax_t> regular_file_size(const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return (uintmax_t)st.st_size;
}

std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes) {
    // O_NONBLOCK: opening a FIFO that slipped in after the check must not wait for a writer.
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return std::nullopt;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return std::nullopt;
    }
    std::string out;
    char buf[65536];
    while (out.size() < max_bytes) {
        const ssize_t n = read(fd, buf, std::min(sizeof buf, max_bytes - out.size()));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, (size_t)n);
    }
    close(fd);
    return out;
}

std::string write_regular_file(const std::string& path, const std::string& content) {
    const fs::path p(path);
    std::error_code ec;
    if (p.has_parent_path()) {
        fs::create_directories(p.parent_path(), ec);
        if (ec) return "cannot create directory " + p.parent_path().string() + ": " + ec.message();
    }
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666);
    if (fd < 0) return std::strerror(errno);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return "not a regular file";
    }
    std::string err;
    if (ftruncate(fd, 0) != 0) err = std::strerror(errno);
    size_t done = 0;
    while (err.empty() && done < content.size()) {
        const ssize_t n = write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) err = std::strerror(errno);
        else done += (size_t)n;
    }
    if (close(fd) != 0 && err.empty()) err = std::strerror(errno);
    return err;
}

std::string base64_encode(const std::string& in) {
    static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        const uint32_t v = (uint32_t)(uint8_t)in[i] << 16 | (uint32_t)(uint8_t)in[i + 1] << 8 | (uint8_t)in[i + 2];
        for (int k = 3; k >= 0; --k) out += digits[(v >> (6 * k)) & 63];
    }
    if (i < in.size()) {
        uint32_t v = (uint32_t)(uint8_t)in[i] << 16;
        if (i + 1 < in.size()) v |= (uint32_t)(uint8_t)in[i + 1] << 8;
        out += digits[(v >> 18) & 63];
        out += digits[(v >> 12) & 63];
        out += i + 1 < in.size() ? digits[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

}  // namespace tools
