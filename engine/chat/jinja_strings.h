// Python str operations on UTF-8 strings, by code point where Python counts code points
// (len, indexing, slicing, strip sets). Case mapping covers ASCII only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engine::jinja {

std::u32string utf8_decode(std::string_view s);  // invalid bytes decode as U+FFFD
std::string utf8_encode(std::u32string_view s);
void utf8_append(std::string& out, char32_t cp);
size_t utf8_length(std::string_view s);  // number of code points

bool py_isspace(char32_t c);
std::string py_strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep=None, maxsplit=-1); without sep: split on whitespace runs, dropping empty parts.
std::vector<std::string> py_split(std::string_view s, const std::optional<std::string>& sep,
                                  int64_t maxsplit);
std::vector<std::string> py_rsplit(std::string_view s, const std::optional<std::string>& sep,
                                   int64_t maxsplit);
std::vector<std::string> py_splitlines(std::string_view s, bool keepends = false);
std::string py_replace(std::string_view s, std::string_view from, std::string_view to, int64_t count = -1);
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
std::string py_title(std::string_view s);       // str.title(): upper after any non-letter
std::string py_capitalize(std::string_view s);  // first upper, rest lower
size_t py_count(std::string_view s, std::string_view sub);
int64_t py_find(std::string_view s, std::string_view sub, bool reverse);  // code point index or -1

// Python slice semantics (negative indices, clamping, any non-zero step): the indices selected
// from a sequence of `length` elements, in order.
std::vector<int64_t> py_slice_indices(int64_t length, std::optional<int64_t> start,
                                      std::optional<int64_t> stop, std::optional<int64_t> step);

// snprintf of one value into a string of whatever length it needs.
template <typename T>
std::string format_c(const std::string& fmt, T value) {
    const int n = std::snprintf(nullptr, 0, fmt.c_str(), value);
    if (n <= 0) return {};
    std::string out(static_cast<size_t>(n), '\0');
    std::snprintf(out.data(), out.size() + 1, fmt.c_str(), value);
    return out;
}

// Python %-formatting: "%s and %d" % args (a single value or a tuple's items).
class Value;
std::string py_percent_format(std::string_view fmt, const std::vector<Value>& args);

}  // namespace engine::jinja
