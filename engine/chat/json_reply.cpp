#include "engine/chat/json_reply.h"

namespace engine::chat {

namespace {

constexpr std::string_view kFence = "```json";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_space(std::string_view s, size_t i) {
    while (i < s.size() && is_space(s[i])) ++i;
    return i;
}

// Where the JSON value starting at `i` ends (one past its last character), or npos while it is unfinished.
// The grammar made the text valid JSON as far as it goes, so only nesting and strings need following.
size_t value_end(std::string_view s, size_t i) {
    if (i >= s.size()) return std::string_view::npos;
    const char first = s[i];
    if (first != '{' && first != '[' && first != '"') {
        // A number or a literal ends where a character that cannot continue it comes.
        for (size_t k = i; k < s.size(); ++k)
            if (is_space(s[k]) || s[k] == '`') return k;
        return std::string_view::npos;
    }
    int depth = 0;
    bool in_string = false, escaped = false;
    for (size_t k = i; k < s.size(); ++k) {
        const char c = s[k];
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') {
                in_string = false;
                if (depth == 0) return k + 1;  // a top-level string
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) return k + 1;
        }
    }
    return std::string_view::npos;
}

}  // namespace

std::string json_reply_content(std::string_view text, bool growing) {
    size_t i = skip_space(text, 0);
    const std::string_view rest = text.substr(i);
    if (rest.substr(0, kFence.size()) == kFence) {
        i = skip_space(text, i + kFence.size());
    } else if (!rest.empty() && kFence.substr(0, rest.size()) == rest) {
        i = text.size();  // maybe the fence: no value yet
    }
    // No value yet: nothing while the text grows; a reply that ended so is its text as written (as
    // llama-server answers when its parse finds no value).
    if (i == text.size()) return growing ? std::string() : std::string(text);
    const size_t end = value_end(text, i);
    return std::string(end == std::string_view::npos ? text.substr(i) : text.substr(i, end - i));
}

}  // namespace engine::chat
