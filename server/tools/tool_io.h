// Where a tool call's files and commands are: this host (host_io) or an isolate that commands reach, a
// container or a host over ssh (isolate_io.h, llama-server's --tools-runtime). The built-in tools do all
// their file reads, writes, listings and commands through one of these, so every tool runs the same
// against each of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/tools/listing.h"
#include "server/tools/subprocess.h"

namespace tools {

class ToolIo {
  public:
    virtual ~ToolIo() = default;

    // The absolute, normalized path of `path` for a call whose working directory is `cwd` ("" = the
    // runtime's own). An isolate without a working directory keeps a relative path relative (to its own).
    virtual std::string resolve(const std::string& path, const std::string& cwd) const = 0;
    // The size of a regular file; nullopt for a missing path or anything else (directory, FIFO, device).
    virtual std::optional<uintmax_t> regular_file_size(const std::string& path) const = 0;
    virtual bool is_directory(const std::string& path) const = 0;
    // At most `max_bytes` of a regular file (nullopt if it is not one or cannot be read).
    virtual std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes) const = 0;
    struct FileRead {
        std::optional<std::string> content;  // nullopt: missing, not a regular file, unreadable or too large
        bool too_large = false;              // a regular file over the limit (not read)
    };
    // Several regular files, each read whole when it has at most `max_bytes` (grep_search's reads). This
    // host reads them one by one; an isolate in as few commands as it can (one command costs it about a
    // tenth of a second in docker). The answer has one entry per path, in order; it may be shorter when
    // `deadline` passed first.
    virtual std::vector<FileRead> read_regular_files(const std::vector<std::string>& paths, size_t max_bytes,
                                                     std::chrono::steady_clock::time_point deadline) const;
    // Writes `content` (created or truncated), creating the parent directories; refuses anything but a
    // regular file. "" on success, else why not.
    virtual std::string write_regular_file(const std::string& path, const std::string& content) const = 0;
    // As tools::list_entries (listing.h), for a resolved base.
    virtual Listing list_entries(const std::string& base, int max_depth, ListKind kind) const = 0;
    // Runs `argv` there, in `options.cwd` (a resolved path there; "" = the runtime's own directory).
    virtual ProcessResult run(const std::vector<std::string>& argv, const ProcessOptions& options) const = 0;
    // The directory commands start in when the call names none.
    virtual std::string default_cwd() const = 0;
};

// This host: the server's file system and processes (a static object; the shared_ptr owns nothing).
const ToolIo& host_io();
std::shared_ptr<const ToolIo> host_io_shared();

}  // namespace tools
