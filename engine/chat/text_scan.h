// Small ASCII-whitespace helpers shared by the output parsers (reasoning and tool calls).
#pragma once

#include <cctype>
#include <string_view>

namespace engine::chat {

inline bool is_space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

inline std::string_view trim_view(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

}  // namespace engine::chat
