// The tools' I/O on the server's own host: the file helpers, the walk and run_process as they are.
#include <filesystem>

#include "server/tools/file_io.h"
#include "server/tools/paths.h"
#include "server/tools/tool_io.h"

namespace tools {

std::vector<ToolIo::FileRead> ToolIo::read_regular_files(const std::vector<std::string>& paths, size_t max_bytes,
                                                         std::chrono::steady_clock::time_point deadline) const {
    std::vector<FileRead> out;
    for (const std::string& p : paths) {
        if (std::chrono::steady_clock::now() >= deadline) break;
        FileRead r;
        if (const auto size = regular_file_size(p)) {
            if (*size > max_bytes) r.too_large = true;
            else r.content = read_regular_file(p, max_bytes);
        }
        out.push_back(std::move(r));
    }
    return out;
}

namespace {

class HostIo final : public ToolIo {
  public:
    std::string resolve(const std::string& path, const std::string& cwd) const override {
        return resolve_path(path, cwd);
    }
    std::optional<uintmax_t> regular_file_size(const std::string& path) const override {
        return tools::regular_file_size(path);
    }
    bool is_directory(const std::string& path) const override {
        std::error_code ec;
        return std::filesystem::is_directory(path, ec);
    }
    std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes) const override {
        return tools::read_regular_file(path, max_bytes);
    }
    std::string write_regular_file(const std::string& path, const std::string& content) const override {
        return tools::write_regular_file(path, content);
    }
    Listing list_entries(const std::string& base, int max_depth, ListKind kind) const override {
        return tools::list_entries(base, max_depth, kind);
    }
    ProcessResult run(const std::vector<std::string>& argv, const ProcessOptions& options) const override {
        return run_process(argv, options);
    }
    std::string default_cwd() const override {
        std::error_code ec;
        return std::filesystem::current_path(ec).string();
    }
};

}  // namespace

const ToolIo& host_io() {
    static const HostIo io;
    return io;
}

std::shared_ptr<const ToolIo> host_io_shared() { return std::shared_ptr<const ToolIo>(&host_io(), [](const ToolIo*) {}); }

}  // namespace tools
