#include "server/tools/listing.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <tuple>

#include "server/tools/subprocess.h"

namespace tools {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxEntries = 1000000;

const char* const kJunkDirs[] = {".git", ".svn", ".hg", "node_modules", "__pycache__", ".venv", "venv",
                                 "dist", "build", "target", ".cache", ".idea", ".vscode"};

bool is_junk_dir(const std::string& name) {
    return std::any_of(std::begin(kJunkDirs), std::end(kJunkDirs), [&](const char* j) { return name == j; });
}

// [class] at pattern[i] against c; sets `end` past the ']' (or returns false with end = npos when the
// bracket is not closed: it is then a literal '[').
bool class_match(const std::string& p, size_t i, char c, size_t& end) {
    size_t j = i + 1;
    bool negate = false;
    if (j < p.size() && (p[j] == '!' || p[j] == '^')) negate = true, ++j;
    bool matched = false;
    bool first = true;
    for (; j < p.size() && (p[j] != ']' || first); ++j, first = false) {
        if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
            if (p[j] <= c && c <= p[j + 2]) matched = true;
            j += 2;
        } else if (p[j] == c) {
            matched = true;
        }
    }
    if (j >= p.size()) {
        end = std::string::npos;
        return false;
    }
    end = j + 1;
    return matched != negate && c != '/';
}

}  // namespace

bool glob_match(const std::string& p, const std::string& s) {
    // ok[i][j]: pattern from i matches text from j; filled from the ends (no recursion, O(|p| * |s|)).
    const size_t P = p.size(), S = s.size();
    std::vector<char> ok((P + 1) * (S + 1), 0);
    auto at = [&](size_t i, size_t j) -> char& { return ok[i * (S + 1) + j]; };
    at(P, S) = 1;
    for (size_t ii = P; ii-- > 0;) {
        const size_t i = ii;
        for (size_t jj = S + 1; jj-- > 0;) {
            const size_t j = jj;
            char r = 0;
            if (p[i] == '*' && i + 1 < P && p[i + 1] == '*') {
                size_t k = i + 2;
                // "**/" also matches no directory at all.
                if (k < P && p[k] == '/' && at(k + 1, j)) r = 1;
                if (!r && at(k, j)) r = 1;
                if (!r && j < S && at(i, j + 1)) r = 1;  // take one more character, '/' included
            } else if (p[i] == '*') {
                r = at(i + 1, j) || (j < S && s[j] != '/' && at(i, j + 1));
            } else if (j < S) {
                if (p[i] == '?') {
                    r = s[j] != '/' && at(i + 1, j + 1);
                } else if (p[i] == '[') {
                    size_t end = 0;
                    const bool m = class_match(p, i, s[j], end);
                    if (end == std::string::npos) r = s[j] == '[' && at(i + 1, j + 1);
                    else r = m && at(end, j + 1);
                } else {
                    r = p[i] == s[j] && at(i + 1, j + 1);
                }
            }
            at(i, j) = r;
        }
    }
    return at(0, 0);
}

bool path_glob_match(const std::string& pattern, const std::string& rel) {
    if (pattern.find('/') == std::string::npos) {
        const size_t slash = rel.rfind('/');
        return glob_match(pattern, slash == std::string::npos ? rel : rel.substr(slash + 1));
    }
    if (pattern[0] == '/') return glob_match(pattern.substr(1), rel);
    if (pattern == "**" || pattern.rfind("**/", 0) == 0) return glob_match(pattern, rel);
    return glob_match("**/" + pattern, rel);
}

namespace {

bool list_with_git(const std::string& base, int max_depth, Listing& out) {
    ProcessOptions po;
    po.max_output = kListOutputCap;
    po.timeout = kListBudget;
    const ProcessResult r =
        run_process({"git", "-C", base, "ls-files", "--cached", "--others", "--exclude-standard"}, po);
    if (!r.spawn_error.empty() || r.exit_code != 0 || r.timed_out || r.truncated) return false;
    std::istringstream lines(r.output);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty()) continue;
        if (max_depth > 0 && path_depth(line) > max_depth) continue;
        std::error_code ec;
        if (fs::is_regular_file(fs::path(base) / line, ec)) out.entries.push_back({line, false});
    }
    return true;
}

void walk(const std::string& base, int max_depth, ListKind kind, Listing& out) {
    const auto deadline = std::chrono::steady_clock::now() + kListBudget;
    std::vector<std::tuple<fs::path, std::string, int>> stack{{fs::path(base), std::string(), 0}};
    while (!stack.empty()) {
        auto [dir, rel_dir, depth] = std::move(stack.back());
        stack.pop_back();
        std::error_code ec;
        fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
        if (ec) {
            out.truncated = true;
            continue;
        }
        std::vector<std::tuple<fs::path, std::string, int>> subdirs;
        for (const fs::directory_iterator end; it != end; it.increment(ec)) {
            if (ec || std::chrono::steady_clock::now() >= deadline || out.entries.size() >= kMaxEntries) {
                out.truncated = true;
                if (ec) break;
                return;
            }
            const std::string name = it->path().filename().string();
            const std::string rel = rel_dir.empty() ? name : rel_dir + "/" + name;
            std::error_code tec;
            if (it->is_directory(tec)) {
                if (kind != ListKind::Files) out.entries.push_back({rel, true});
                // A link to a directory may lead back up: listed, never entered.
                if (!is_junk_dir(name) && !it->is_symlink(tec) && (max_depth == 0 || depth + 1 < max_depth))
                    subdirs.emplace_back(it->path(), rel, depth + 1);
            } else if (it->is_regular_file(tec) && kind != ListKind::Dirs) {
                out.entries.push_back({rel, false});
            }
        }
        // Entered in name order (the stack takes the last first).
        std::sort(subdirs.begin(), subdirs.end(),
                  [](const auto& a, const auto& b) { return std::get<1>(a) > std::get<1>(b); });
        for (auto& d : subdirs) stack.push_back(std::move(d));
    }
}

}  // namespace

std::span<const char* const> junk_dir_names() { return kJunkDirs; }

int path_depth(const std::string& rel) { return 1 + (int)std::count(rel.begin(), rel.end(), '/'); }

Listing list_entries(const std::string& base, int max_depth, ListKind kind) {
    Listing out;
    std::error_code ec;
    if (!fs::is_directory(base, ec)) {
        out.error = "path does not exist or is not a directory";
        return out;
    }
    if (kind == ListKind::Files && list_with_git(base, max_depth, out)) return out;
    out.entries.clear();
    walk(base, max_depth, kind, out);
    // Directory order is the file system's: sort, so that the same tree always lists the same way.
    std::sort(out.entries.begin(), out.entries.end(),
              [](const ListEntry& a, const ListEntry& b) { return a.rel < b.rel; });
    return out;
}

}  // namespace tools
