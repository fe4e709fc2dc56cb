// edit_file: exact replacements, each of a text that occurs once. When a text is not found as written,
// it is looked for again with both sides normalized line by line (trailing blanks dropped; typographic
// quotes, dashes and spaces made ASCII), as llama-server does for models that retype a file's
// punctuation; the lines such an edit touches are then written normalized, the others stay as they were.
#include <algorithm>

#include "server/tools/tool.h"

namespace tools {

using json = nlohmann::json;

namespace {

constexpr size_t kEditMaxFile = 64u << 20;

// UTF-8 sequences the normalization replaces, and with what.
struct Fold {
    const char* from;
    char to;
};
constexpr Fold kFolds[] = {
    {"\u2018", '\''}, {"\u2019", '\''}, {"\u201A", '\''}, {"\u201B", '\''},                     // single quotes
    {"\u201C", '"'},  {"\u201D", '"'},  {"\u201E", '"'},  {"\u201F", '"'},                      // double quotes
    {"\u2010", '-'},  {"\u2011", '-'},  {"\u2012", '-'},  {"\u2013", '-'}, {"\u2014", '-'},    // dashes
    {"\u2015", '-'},  {"\u2212", '-'},                                                          // minus
    {"\u00A0", ' '},  {"\u2002", ' '},  {"\u2003", ' '},  {"\u2004", ' '}, {"\u2005", ' '},    // spaces
    {"\u2006", ' '},  {"\u2007", ' '},  {"\u2008", ' '},  {"\u2009", ' '}, {"\u200A", ' '},
    {"\u202F", ' '},  {"\u205F", ' '},  {"\u3000", ' '},
};

std::string normalize_line(std::string_view line) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    std::string out;
    out.reserve(line.size());
    for (size_t i = 0; i < line.size();) {
        bool folded = false;
        if ((unsigned char)line[i] >= 0x80)
            for (const Fold& f : kFolds) {
                const std::string_view from(f.from);
                if (line.substr(i, from.size()) == from) {
                    out += f.to;
                    i += from.size();
                    folded = true;
                    break;
                }
            }
        if (!folded) out += line[i++];
    }
    return out;
}

// Line by line; the number of lines (and so each line's index) stays the same.
std::string normalize(const std::string& text) {
    std::string out;
    size_t start = 0;
    for (;;) {
        const size_t nl = text.find('\n', start);
        out += normalize_line(std::string_view(text).substr(start, nl == std::string::npos ? std::string::npos : nl - start));
        if (nl == std::string::npos) return out;
        out += '\n';
        start = nl + 1;
    }
}

size_t count_occurrences(const std::string& text, const std::string& needle) {
    size_t n = 0;
    if (needle.empty()) return 0;
    for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
    return n;
}

// Offsets where each line of `text` starts (one past the end as the last entry).
std::vector<size_t> line_starts(const std::string& text) {
    std::vector<size_t> starts{0};
    for (size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n') starts.push_back(i + 1);
    if (starts.back() != text.size()) starts.push_back(text.size());
    return starts;
}

struct Match {
    size_t edit;  // index in the request
    size_t at, len;
    std::string replacement;
};

std::string replace_all(const std::string& text, const std::vector<Match>& matches, size_t offset) {
    std::string out;
    size_t pos = offset;
    for (const Match& m : matches) {
        out.append(text, pos - offset, m.at - pos);
        out += m.replacement;
        pos = m.at + m.len;
    }
    out.append(text, pos - offset, std::string::npos);
    return out;
}

// Matches (sorted, disjoint) are offsets in `norm`; lines they touch are taken from `norm` with the
// replacements, the other lines from `original`.
std::string replace_keeping_lines(const std::string& original, const std::string& norm, const std::vector<Match>& matches) {
    const std::vector<size_t> orig_lines = line_starts(original), norm_lines = line_starts(norm);
    auto line_of = [&](size_t offset) {  // the line holding byte `offset` of norm
        return (size_t)(std::upper_bound(norm_lines.begin(), norm_lines.end(), offset) - norm_lines.begin()) - 1;
    };
    std::string out;
    size_t next_line = 0;  // first original line not yet written
    for (size_t i = 0; i < matches.size();) {
        const size_t first = line_of(matches[i].at);
        size_t last = line_of(matches[i].at + matches[i].len - 1);
        size_t j = i + 1;
        while (j < matches.size() && line_of(matches[j].at) <= last) {
            last = std::max(last, line_of(matches[j].at + matches[j].len - 1));
            ++j;
        }
        out.append(original, orig_lines[next_line], orig_lines[first] - orig_lines[next_line]);
        const size_t from = norm_lines[first], to = norm_lines[last + 1];
        std::vector<Match> group(matches.begin() + (long)i, matches.begin() + (long)j);
        out += replace_all(norm.substr(from, to - from), group, from);
        next_line = last + 1;
        i = j;
    }
    out.append(original, orig_lines[std::min(next_line, orig_lines.size() - 1)], std::string::npos);
    return out;
}

}  // namespace

Tool edit_file_tool() {
    Tool t;
    t.name = "edit_file";
    t.display_name = "Edit file";
    t.write = true;
    json edit_item = {{"type", "object"},
                      {"properties",
                       {{"old_text", param("string", "The exact text to replace: it must occur once in the file and "
                                                     "not overlap another edit's")},
                        {"new_text", param("string", "The text to put in its place")}}},
                      {"required", {"old_text", "new_text"}}};
    t.definition = function_definition(
        t.name,
        "Edit a file by exact text replacement. Every edits[].old_text must occur exactly once in the file "
        "and is looked for in the file as it was before this call (edits do not see each other's results). "
        "Merge nearby changes into one edit rather than overlapping edits; use write_file to replace a whole file.",
        {{"path", param("string", "Path of the file to edit")},
         {"edits", {{"type", "array"}, {"description", "One or more exact replacements"}, {"items", edit_item}}}},
        {"path", "edits"});
    t.invoke = [](const json& params, const CallContext& ctx) -> json {
        const std::string path = params["path"].get<std::string>();
        const json& edits = params["edits"];
        if (edits.empty()) return {{"error", "\"edits\" must be a non-empty array"}};
        for (size_t i = 0; i < edits.size(); ++i)
            if (edits[i]["old_text"].get<std::string>().empty())
                return {{"error", "edits[" + std::to_string(i) + "].old_text must not be empty"}};
        const ToolIo& io = *ctx.io;
        const std::string full = io.resolve(path, ctx.cwd);
        const auto size = io.regular_file_size(full);
        if (size && *size > kEditMaxFile)
            return {{"error", "file too large to edit (" + std::to_string(*size) + " bytes, max " +
                                  std::to_string(kEditMaxFile) + ")"}};
        const auto read = size ? io.read_regular_file(full, kEditMaxFile) : std::nullopt;
        if (!read) return {{"error", "failed to open file: " + path}};
        const std::string& original = *read;
        const std::string norm = normalize(original);

        bool fuzzy = false;
        for (size_t i = 0; i < edits.size(); ++i) {
            const std::string old_text = edits[i]["old_text"].get<std::string>();
            if (original.find(old_text) != std::string::npos) continue;
            const std::string folded = normalize(old_text);
            if (folded.empty() || norm.find(folded) == std::string::npos)
                return {{"error", "could not find edits[" + std::to_string(i) + "].old_text in " + path +
                                      ": it must match the file's current content exactly"}};
            fuzzy = true;
        }
        const std::string& base = fuzzy ? norm : original;
        std::vector<Match> matches;
        for (size_t i = 0; i < edits.size(); ++i) {
            const std::string old_text = edits[i]["old_text"].get<std::string>();
            // Unique even after normalization: texts that differ only in blanks count as the same.
            if (const size_t n = count_occurrences(norm, normalize(old_text)); n > 1)
                return {{"error", "found " + std::to_string(n) + " occurrences of edits[" + std::to_string(i) +
                                      "].old_text in " + path + ": it must be unique"}};
            const std::string needle = fuzzy ? normalize(old_text) : old_text;
            matches.push_back({i, base.find(needle), needle.size(), edits[i]["new_text"].get<std::string>()});
        }
        std::sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) { return a.at < b.at; });
        for (size_t i = 1; i < matches.size(); ++i)
            if (matches[i - 1].at + matches[i - 1].len > matches[i].at)
                return {{"error", "edits[" + std::to_string(matches[i - 1].edit) + "] and edits[" +
                                      std::to_string(matches[i].edit) + "] overlap in " + path +
                                      ": merge them into one edit or edit disjoint text"}};
        const std::string updated = fuzzy ? replace_keeping_lines(original, norm, matches) : replace_all(original, matches, 0);
        if (updated == original) return {{"error", "no changes made: the replacements give the same content"}};
        if (!io.write_regular_file(full, updated).empty()) return {{"error", "failed to write file: " + path}};
        return {{"result", "file edited successfully"}, {"path", path}, {"edits_applied", matches.size()}};
    };
    return t;
}

}  // namespace tools
