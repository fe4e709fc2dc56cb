// file_glob_search and grep_search: walk a directory (listing.h), select by glob, search lines.
#include <algorithm>
#include <chrono>
#include <regex>
#include <sstream>

#include "server/tools/listing.h"
#include "server/tools/tool.h"

namespace tools {

using json = nlohmann::json;

namespace {
constexpr long long kGlobMaxResults = 100;
constexpr size_t kGrepMaxResults = 100;
constexpr size_t kGrepMaxFileBytes = 16u << 20;   // larger files are not searched
constexpr size_t kGrepMaxRegexLine = 16 * 1024;   // longer lines are not given to the regex engine
constexpr auto kGrepBudget = std::chrono::seconds(20);
constexpr size_t kGrepReadBatch = 64;              // files read at once
}  // namespace

Tool file_glob_search_tool() {
    Tool t;
    t.name = "file_glob_search";
    t.display_name = "File search";
    t.write = false;
    t.definition = function_definition(
        t.name,
        "Find files whose path matches a glob pattern, recursively under a directory. Files ignored by "
        ".gitignore are skipped when the directory is in a git work tree, and the usual junk directories "
        "(.git, node_modules, build, dist, ...) otherwise. A pattern without '/' (\"*.cpp\") matches file "
        "names at any depth; a pattern with '/' matches the whole relative path and gets a \"**/\" prefix "
        "unless it starts with \"**/\" or '/'. type \"dir\" or \"all\" lists directories too (written with "
        "a trailing '/'; .gitignore does not apply to them).",
        {{"path", param("string", "Directory to search under")},
         {"include", param("string", "Glob pattern of the files to list (e.g. \"*.cpp\", \"src/**/*.h\"; default **)")},
         {"exclude", param("string", "Glob pattern of the files to leave out")},
         {"type", param("string", "What to list: \"file\" (default), \"dir\" or \"all\"")},
         {"max_depth", param("integer", "How deep to descend (default 0: no limit; 1: the directory's own entries)")},
         {"limit", param("integer", "Most results to return, at most 100 (default 100)")}},
        {"path"});
    t.invoke = [](const json& params, const CallContext& ctx) -> json {
        const std::string path = params["path"].get<std::string>();
        const std::string base = ctx.io->resolve(path, ctx.cwd);
        const std::string include = params.value("include", std::string("**"));
        const std::string exclude = params.value("exclude", std::string());
        const std::string type = params.value("type", std::string("file"));
        const long long max_depth = std::max(0LL, params.value("max_depth", 0LL));
        const long long limit_req = params.value("limit", kGlobMaxResults);
        if (limit_req < 1)
            return {{"error", "invalid limit: " + std::to_string(limit_req) + " (expected 1 or more)"}};
        const size_t limit = (size_t)std::min(limit_req, kGlobMaxResults);
        ListKind kind;
        if (type == "file") kind = ListKind::Files;
        else if (type == "dir") kind = ListKind::Dirs;
        else if (type == "all") kind = ListKind::All;
        else return {{"error", "invalid type: " + type + " (expected \"file\", \"dir\" or \"all\")"}};

        const Listing listing = ctx.io->list_entries(base, (int)std::min<long long>(max_depth, 1 << 20), kind);
        if (!listing.error.empty()) return {{"error", listing.error + ": " + path}};
        std::vector<const ListEntry*> matches;
        for (const ListEntry& e : listing.entries)
            if (path_glob_match(include, e.rel) && (exclude.empty() || !path_glob_match(exclude, e.rel)))
                matches.push_back(&e);
        const size_t shown = std::min(matches.size(), limit);
        std::ostringstream text;
        json entries = json::array();
        for (size_t i = 0; i < shown; ++i) {
            text << matches[i]->rel << (matches[i]->is_dir ? "/" : "") << "\n";
            entries.push_back({{"path", matches[i]->rel}, {"type", matches[i]->is_dir ? "dir" : "file"}});
        }
        text << "\n---\nTotal matches: " << matches.size() << "\n";
        if (matches.size() > shown)
            text << "[" << shown << " results limit reached (" << matches.size()
                 << " total matches). Narrow the glob pattern to see the rest.]\n";
        if (listing.truncated) text << "[results truncated: time budget or unreadable directory]\n";
        return {{"plain_text_response", text.str()}, {"entries", entries}, {"base", base}};
    };
    return t;
}

namespace {

std::string lower_ascii(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    return s;
}

// One way of testing a line: a literal substring (no regex engine at all), or an ECMAScript regex.
struct LineMatcher {
    bool literal = false, ignore_case = false;
    std::string needle;
    std::regex re;
    size_t skipped_long = 0;  // lines too long for the regex engine
    bool matches(const std::string& line) {
        if (literal) return (ignore_case ? lower_ascii(line) : line).find(needle) != std::string::npos;
        // std::regex recurses per character: very long lines could exhaust the thread's stack.
        if (line.size() > kGrepMaxRegexLine) {
            ++skipped_long;
            return false;
        }
        return std::regex_search(line, re);
    }
};

}  // namespace

Tool grep_search_tool() {
    Tool t;
    t.name = "grep_search";
    t.display_name = "Grep search";
    t.write = false;
    t.definition = function_definition(
        t.name,
        "Search files under a path for a pattern. Returns the matching lines with their file paths (relative "
        "to the directory searched, unless a single file is searched). Files ignored by .gitignore are "
        "skipped when the directory is in a git work tree, and the usual junk directories (.git, "
        "node_modules, build, dist, ...) otherwise. include/exclude: a pattern without '/' matches file names "
        "at any depth, one with '/' the whole relative path (with a \"**/\" prefix unless it starts with "
        "\"**/\" or '/').",
        {{"path", param("string", "File or directory to search")},
         {"pattern", param("string", "What to look for: a regular expression (ECMAScript) unless literal is true")},
         {"include", param("string", "Glob pattern of the files to search (default **)")},
         {"exclude", param("string", "Glob pattern of the files to leave out")},
         {"return_line_numbers", param("boolean", "Give each line's number")},
         {"literal", param("boolean", "Take the pattern as plain text (default false)")},
         {"ignore_case", param("boolean", "Ignore case (default false)")},
         {"context_lines", param("integer", "Lines of context before and after each match (default 0)")}},
        {"path", "pattern"});
    t.invoke = [](const json& params, const CallContext& ctx) -> json {
        const std::string path = params["path"].get<std::string>();
        const std::string pattern = params["pattern"].get<std::string>();
        const std::string include = params.value("include", std::string("**"));
        const std::string exclude = params.value("exclude", std::string());
        const bool numbers = params.value("return_line_numbers", false);
        LineMatcher m;
        m.literal = params.value("literal", false);
        m.ignore_case = params.value("ignore_case", false);
        const long long context = std::clamp(params.value("context_lines", 0LL), 0LL, 1000LL);
        if (m.literal) {
            m.needle = m.ignore_case ? lower_ascii(pattern) : pattern;
        } else {
            try {
                auto flags = std::regex::ECMAScript;
                if (m.ignore_case) flags |= std::regex::icase;
                m.re = std::regex(pattern, flags);
            } catch (const std::regex_error& e) {
                return {{"error", std::string("invalid regex: ") + e.what()}};
            }
        }
        // (absolute path, path as shown)
        std::vector<std::pair<std::string, std::string>> files;
        const ToolIo& io = *ctx.io;
        const std::string full = io.resolve(path, ctx.cwd);
        if (io.regular_file_size(full)) {
            files.emplace_back(full, path);
        } else if (io.is_directory(full)) {
            const Listing listing = io.list_entries(full, 0, ListKind::Files);
            if (!listing.error.empty()) return {{"error", listing.error + ": " + path}};
            for (const ListEntry& e : listing.entries)
                if (path_glob_match(include, e.rel) && (exclude.empty() || !path_glob_match(exclude, e.rel)))
                    files.emplace_back(full + "/" + e.rel, e.rel);
        } else {
            return {{"error", "path does not exist: " + path}};
        }

        const auto deadline = std::chrono::steady_clock::now() + kGrepBudget;
        const bool show_numbers = numbers || context > 0;
        std::ostringstream text;
        size_t total = 0, skipped_large = 0;
        bool limit_reached = false, out_of_time = false;
        std::vector<ToolIo::FileRead> reads;
        for (size_t f = 0; f < files.size(); ++f) {
            if (limit_reached || out_of_time) break;
            if (std::chrono::steady_clock::now() >= deadline) {
                out_of_time = true;
                break;
            }
            // Read ahead in batches (an isolate reads a batch with one command).
            if (f % kGrepReadBatch == 0) {
                std::vector<std::string> batch;
                for (size_t k = f; k < std::min(files.size(), f + kGrepReadBatch); ++k) batch.push_back(files[k].first);
                reads = io.read_regular_files(batch, kGrepMaxFileBytes, deadline);
            }
            if (f % kGrepReadBatch >= reads.size()) {
                out_of_time = true;  // the batch stopped at the deadline
                break;
            }
            ToolIo::FileRead& read = reads[f % kGrepReadBatch];
            const std::string& shown = files[f].second;
            if (read.too_large) ++skipped_large;
            if (!read.content) continue;
            const std::string content = std::move(*read.content);
            read.content.reset();
            std::vector<std::string> lines;
            std::istringstream in(content);
            for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
            for (size_t i = 0; i < lines.size(); ++i) {
                if (total >= kGrepMaxResults) {
                    limit_reached = true;
                    break;
                }
                if (!m.matches(lines[i])) continue;
                const size_t from = (size_t)std::max<long long>(0, (long long)i - context);
                const size_t to = std::min(lines.size() - 1, i + (size_t)context);
                for (size_t j = from; j <= to; ++j) {
                    const char sep = j == i ? ':' : '-';
                    text << shown << sep;
                    if (show_numbers) text << (j + 1) << sep;
                    text << lines[j] << "\n";
                }
                if (context > 0) text << "--\n";
                ++total;
            }
        }
        text << "\n---\nTotal matches: " << total << "\n";
        if (limit_reached)
            text << "[" << kGrepMaxResults << " matches limit reached. Narrow the path, pattern or include to see more.]\n";
        if (out_of_time) text << "[search stopped: time budget reached]\n";
        if (skipped_large > 0)
            text << "[" << skipped_large << " files larger than " << (kGrepMaxFileBytes >> 20) << " MiB not searched]\n";
        if (m.skipped_long > 0)
            text << "[" << m.skipped_long << " lines longer than " << kGrepMaxRegexLine
                 << " bytes not searched with the regex; use literal for them]\n";
        return {{"plain_text_response", text.str()}};
    };
    return t;
}

}  // namespace tools
