#include "engine/chat/tool_call_scan.h"

#include <algorithm>

#include "engine/chat/text_scan.h"

namespace engine::chat::scan {

namespace {

// End (exclusive) of the string that opens at s[start] with a quote; npos when it is not closed.
size_t string_end(std::string_view s, size_t start) {
    for (size_t i = start + 1; i < s.size(); ++i) {
        if (s[i] == '\\') {
            ++i;
        } else if (s[i] == '"') {
            return i + 1;
        }
    }
    return std::string_view::npos;
}

// End (exclusive) of the object or array that opens at s[start]; npos when it is not closed.
size_t nested_end(std::string_view s, size_t start) {
    int depth = 0;
    for (size_t i = start; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '"') {
            i = string_end(s, i);
            if (i == std::string_view::npos) return i;
            --i;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
            return i + 1;
        }
    }
    return std::string_view::npos;
}

bool scalar_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.';
}

}  // namespace

Got Scan::end() const {
    if (!at_end()) return Got::No;
    return growing_ ? Got::More : Got::Yes;
}

void Scan::space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
}

Got Scan::lit(std::string_view word) {
    const std::string_view rest = text_.substr(pos_);
    if (rest.substr(0, word.size()) == word) {
        pos_ += word.size();
        return Got::Yes;
    }
    if (growing_ && rest.size() < word.size() && word.substr(0, rest.size()) == rest) return Got::More;
    return Got::No;
}

Got Scan::until(std::string_view word, std::string_view& before) {
    size_t which = 0;
    return until_any({word}, before, which);
}

Got Scan::until_any(std::initializer_list<std::string_view> words, std::string_view& before, size_t& which) {
    const std::string_view rest = text_.substr(pos_);
    size_t best = std::string_view::npos;
    size_t k = 0;
    for (std::string_view w : words) {
        const size_t at = rest.find(w);
        if (at < best) {
            best = at;
            which = k;
        }
        ++k;
    }
    if (best != std::string_view::npos) {
        before = rest.substr(0, best);
        pos_ += best + std::data(words)[which].size();
        return Got::Yes;
    }
    if (!growing_) {
        before = rest;
        pos_ = text_.size();
        return Got::No;
    }
    size_t held = 0;
    for (std::string_view w : words) held = std::max(held, partial_suffix(rest, w));
    before = rest.substr(0, rest.size() - held);
    return Got::More;
}

Got Scan::json(std::string_view& raw) {
    const std::string_view rest = text_.substr(pos_);
    if (rest.empty()) return growing_ ? Got::More : Got::No;
    size_t end = std::string_view::npos;
    const char c = rest[0];
    if (c == '{' || c == '[') {
        end = nested_end(rest, 0);
    } else if (c == '"') {
        end = string_end(rest, 0);
    } else if (scalar_char(c)) {
        end = 0;
        while (end < rest.size() && scalar_char(rest[end])) ++end;
        if (end == rest.size() && growing_) end = std::string_view::npos;  // a number may go on
    } else {
        return Got::No;
    }
    if (end == std::string_view::npos) {
        raw = rest;
        return growing_ ? Got::More : Got::No;
    }
    raw = rest.substr(0, end);
    if (Json::parse(raw, nullptr, false).is_discarded()) return Got::No;
    pos_ += end;
    return Got::Yes;
}

Got Scan::json_string(std::string& value) {
    if (peek() != '"') return at_end() && growing_ ? Got::More : Got::No;
    std::string_view raw;
    const Got g = json(raw);
    if (g == Got::Yes) value = Json::parse(raw).get<std::string>();
    return g;
}

std::string minify_json(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    bool in_string = false, escaped = false;
    for (const char c : raw) {
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (is_space(c)) {
            continue;
        }
        out += c;
    }
    return out;
}

std::string json_text(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

void Calls::begin(size_t at) {
    block_at_ = at;
    block_calls_ = calls_.size();
    block_content_ = content_.size();
}

PartialToolCall& Calls::open() {
    std::string index = std::to_string(calls_.size());
    if (index.size() < size_t(std::max(options_.id_digits, 0)))
        index.insert(0, size_t(options_.id_digits) - index.size(), '0');
    calls_.push_back({options_.id_prefix + index, "", false, "", false});
    return calls_.back();
}

void Calls::fail() {
    calls_.resize(block_calls_);
    content_.resize(block_content_);
    content_ += text_.substr(std::min(block_at_, text_.size()));
}

}  // namespace engine::chat::scan
