// What the search tools walk: the files (and directories) under a base directory, and the glob patterns
// that select among them.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <vector>

namespace tools {

// Shell-style glob over '/'-separated paths: `*` any run of characters but '/', `?` one character but
// '/', `[abc]` / `[a-z]` / `[!x]` one character of a class, `**` any run including '/' (and `**/` also
// no directory at all).
bool glob_match(const std::string& pattern, const std::string& path);
// As llama-server's tools apply include/exclude patterns: a pattern without '/' matches the entry's
// file name at any depth; one with '/' matches the whole relative path, anchored at the base when it
// starts with "**/" or '/' and else prefixed with "**/".
bool path_glob_match(const std::string& pattern, const std::string& rel_path);

enum class ListKind { Files, Dirs, All };

struct ListEntry {
    std::string rel;  // '/'-separated, relative to the base
    bool is_dir = false;
};

struct Listing {
    std::vector<ListEntry> entries;
    std::string error;       // the base is not a directory
    bool truncated = false;  // the time budget ran out, or a directory could not be read
};

// A listing's bounds: its time, and the output of the program that lists (git ls-files, find).
inline constexpr std::chrono::seconds kListBudget{15};
inline constexpr size_t kListOutputCap = 8u << 20;
// Directories a walk lists but never enters: they can be enormous (.git, node_modules, build, ...).
std::span<const char* const> junk_dir_names();
// The depth of a '/'-separated relative path: "a" is 1, "a/b" 2.
int path_depth(const std::string& rel);

// Entries under `base` (absolute). max_depth 0: no limit, 1: the base's own entries. Files only: `git
// ls-files` (tracked and untracked files not ignored by .gitignore) when the base is in a work tree;
// otherwise a walk that lists but never enters the usual junk directories (.git, node_modules, build,
// ...) nor symbolic links to directories. Bounded by 15 s and 1,000,000 entries.
Listing list_entries(const std::string& base, int max_depth, ListKind kind);

}  // namespace tools
