// Small file helpers for the file tools: bounded reads of regular files and writes that create the
// parent directories. No shell is involved.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tools {

// The size of a regular file; nullopt for a missing path or anything else (directory, FIFO, device).
std::optional<uintmax_t> regular_file_size(const std::string& path);
// Reads at most `max_bytes` of a regular file (nullopt if it cannot be opened, or is not one).
std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes);
// Writes `content` to `path` (created or truncated), creating its parent directories; refuses to write
// through anything but a regular file (a FIFO would block, a device would be written). "" on success,
// else why not.
std::string write_regular_file(const std::string& path, const std::string& content);

// Standard base64 (with padding).
std::string base64_encode(const std::string& bytes);

}  // namespace tools
