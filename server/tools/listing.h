// What the search tools walk: the files (and directories) under a base directory, and the glob patterns
// that select among them.
#pragma once

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

// Entries under `base` (absolute). max_depth 0: no limit, 1: the base's own entries. Files only: `git
// ls-files` (tracked and untracked files not ignored by .gitignore) when the base is in a work tree;
// otherwise a walk that lists but never enters the usual junk directories (.git, node_modules, build,
// ...) nor symbolic links to directories. Bounded by 15 s and 1,000,000 entries.
Listing list_entries(const std::string& base, int max_depth, ListKind kind);

}  // namespace tools
