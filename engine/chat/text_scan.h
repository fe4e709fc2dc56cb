// Small helpers shared by the output parsers (reasoning, tool calls, Harmony) and the stream parser:
// ASCII whitespace and markers a growing text may end with.
#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>

namespace engine::chat {

inline bool is_space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

inline std::string_view ltrim_view(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    return s;
}

inline std::string_view rtrim_view(std::string_view s) {
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

inline std::string_view trim_view(std::string_view s) {
    return rtrim_view(ltrim_view(s));
}

// Length of the longest suffix of `text` that is a proper prefix of `word`: what a growing text holds back
// because it may be the start of a marker.
inline size_t partial_suffix(std::string_view text, std::string_view word) {
    for (size_t n = std::min(text.size(), word.size() - 1); n > 0; --n)
        if (text.substr(text.size() - n) == word.substr(0, n)) return n;
    return 0;
}

}  // namespace engine::chat
