#include "server/tools/paths.h"

#include <cstdlib>
#include <filesystem>

namespace tools {

namespace fs = std::filesystem;

namespace {
// Read once: getenv is not safe against a concurrent setenv.
const std::string& home_dir() {
    static const std::string home = [] {
        const char* h = std::getenv("HOME");
        return std::string(h ? h : "");
    }();
    return home;
}
}  // namespace

std::string expand_home(const std::string& path) {
    if (path.empty() || path[0] != '~' || (path.size() > 1 && path[1] != '/')) return path;
    if (home_dir().empty()) return path;
    return home_dir() + path.substr(1);
}

std::string resolve_path(const std::string& path, const std::string& cwd) {
    fs::path p(expand_home(path));
    if (p.is_relative()) {
        fs::path base;
        if (!cwd.empty()) {
            base = fs::path(expand_home(cwd));
        }
        if (base.empty() || base.is_relative()) {
            std::error_code ec;
            const fs::path here = fs::current_path(ec);
            if (ec) return p.lexically_normal().string();
            base = here / base;
        }
        p = base / p;
    }
    p = p.lexically_normal();
    // "a/b/.." normalizes to "a/": drop the separator, but keep "/".
    if (!p.has_filename() && p != p.root_path()) p = p.parent_path();
    return p.string();
}

}  // namespace tools
