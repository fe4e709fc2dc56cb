#include "engine/chat/jinja_lexer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_strings.h"

namespace engine::jinja {

namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// jinja2 splits lines on \r\n, \r and \n and drops one trailing newline unless told to keep it.
std::string normalize_source(std::string_view source, bool keep_trailing_newline) {
    std::string out;
    out.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            out += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            out += source[i];
        }
    }
    if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

class Lexer {
  public:
    Lexer(std::string_view source, const LexerOptions& options)
        : src_(normalize_source(source, options.keep_trailing_newline)), o_(options) {
        line_starts_.push_back(0);
        for (size_t i = 0; i < src_.size(); ++i) {
            if (src_[i] == '\n') line_starts_.push_back(i + 1);
        }
    }

    std::vector<Token> run() {
        const size_t n = src_.size();
        while (pos_ < n) {
            const size_t tag = find_tag(pos_);
            std::string text = src_.substr(pos_, (tag == std::string::npos ? n : tag) - pos_);
            if (tag == std::string::npos) {
                emit_text(std::move(text), pos_);
                break;
            }
            const char kind = src_[tag + 1];
            const char ctrl =
                tag + 2 < n && (src_[tag + 2] == '-' || src_[tag + 2] == '+') ? src_[tag + 2] : 0;
            if (ctrl == '-') {
                while (!text.empty() && is_space(text.back())) text.pop_back();
            } else if (ctrl != '+' && o_.lstrip_blocks && kind != '{') {
                lstrip_line(text);
            }
            emit_text(std::move(text), pos_);
            const size_t body = tag + 2 + (ctrl ? 1 : 0);
            if (kind == '#') {
                const size_t end = src_.find("#}", body);
                if (end == std::string::npos) error(tag, "missing end of comment tag");
                const char end_ctrl = end > body && src_[end - 1] == '-' ? '-' : 0;
                pos_ = end + 2;
                after_tag(end_ctrl, true);
            } else if (kind == '%') {
                if (lex_raw(body)) continue;
                emit(TokenType::BlockBegin, "{%", tag);
                pos_ = body;
                const char end_ctrl = lex_expression(true);
                emit(TokenType::BlockEnd, "%}", end_pos_);
                after_tag(end_ctrl, true);
            } else {
                emit(TokenType::VarBegin, "{{", tag);
                pos_ = body;
                const char end_ctrl = lex_expression(false);
                emit(TokenType::VarEnd, "}}", end_pos_);
                after_tag(end_ctrl, false);
            }
        }
        emit(TokenType::End, "", src_.size());
        return std::move(out_);
    }

  private:
    void location(size_t offset, int& line, int& column) const {
        const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
        const size_t idx = static_cast<size_t>(it - line_starts_.begin()) - 1;
        line = static_cast<int>(idx) + 1;
        column = static_cast<int>(offset - line_starts_[idx]) + 1;
    }

    [[noreturn]] void error(size_t offset, std::string message) const {
        int line = 0, column = 0;
        location(offset, line, column);
        throw TemplateError(TemplateError::Kind::Syntax, std::move(message), line, column);
    }

    Token& emit(TokenType type, std::string text, size_t offset) {
        Token t;
        t.type = type;
        t.text = std::move(text);
        location(offset, t.line, t.column);
        out_.push_back(std::move(t));
        return out_.back();
    }

    void emit_text(std::string text, size_t offset) {
        if (!text.empty()) emit(TokenType::Text, std::move(text), offset);
    }

    size_t find_tag(size_t from) const {
        for (size_t p = src_.find('{', from); p != std::string::npos; p = src_.find('{', p + 1)) {
            if (p + 1 < src_.size() && (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#'))
                return p;
        }
        return std::string::npos;
    }

    // lstrip_blocks: drop spaces and tabs between the start of the line and a block or comment tag.
    void lstrip_line(std::string& text) const {
        const size_t nl = text.rfind('\n');
        const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
        if (l_pos == 0 && !line_starting_) return;
        for (size_t i = l_pos; i < text.size(); ++i) {
            if (!is_space(text[i])) return;
        }
        text.resize(l_pos);
    }

    // Whitespace after a tag: `-` eats all of it; trim_blocks eats one newline after blocks/comments.
    void after_tag(char end_ctrl, bool block_or_comment) {
        if (end_ctrl == '-') {
            const size_t start = pos_;
            while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
            line_starting_ = pos_ > start && src_[pos_ - 1] == '\n';
        } else if (block_or_comment && end_ctrl != '+' && o_.trim_blocks && pos_ < src_.size() &&
                   src_[pos_] == '\n') {
            ++pos_;
            line_starting_ = true;
        } else {
            line_starting_ = false;
        }
    }

    bool starts_with(size_t at, std::string_view s) const { return src_.compare(at, s.size(), s) == 0; }

    // {% raw %}...{% endraw %}: the content is text, not template code.
    bool lex_raw(size_t body) {
        size_t p = body;
        while (p < src_.size() && is_space(src_[p])) ++p;
        if (!starts_with(p, "raw")) return false;
        p += 3;
        while (p < src_.size() && is_space(src_[p])) ++p;
        char open_ctrl = 0;
        if (src_.compare(p, 3, "-%}") == 0) {
            open_ctrl = '-';
            p += 3;
        } else if (src_.compare(p, 2, "%}") == 0) {
            p += 2;
        } else {
            return false;
        }
        const size_t raw_tag = body - 2;
        if (open_ctrl == '-') {
            while (p < src_.size() && is_space(src_[p])) ++p;
        }
        // find {%[-+]? endraw [-+]?%}
        for (size_t q = src_.find("{%", p); q != std::string::npos; q = src_.find("{%", q + 2)) {
            size_t r = q + 2;
            const char ctrl = r < src_.size() && (src_[r] == '-' || src_[r] == '+') ? src_[r++] : 0;
            while (r < src_.size() && is_space(src_[r])) ++r;
            if (!starts_with(r, "endraw")) continue;
            r += 6;
            while (r < src_.size() && is_space(src_[r])) ++r;
            char end_ctrl = 0;
            if (r < src_.size() && (src_[r] == '-' || src_[r] == '+')) end_ctrl = src_[r++];
            if (!starts_with(r, "%}")) continue;
            std::string text = src_.substr(p, q - p);
            if (ctrl == '-') {
                while (!text.empty() && is_space(text.back())) text.pop_back();
            }
            emit_text(std::move(text), p);
            pos_ = r + 2;
            after_tag(end_ctrl, true);
            return true;
        }
        error(raw_tag, "missing end of raw directive");
    }

    // Tokens of one tag up to its end delimiter; returns the end's whitespace modifier.
    char lex_expression(bool block) {
        std::vector<char> balance;
        const size_t n = src_.size();
        while (true) {
            while (pos_ < n && is_space(src_[pos_])) ++pos_;
            if (pos_ >= n)
                error(pos_, block ? "unexpected end of template, expected '%}'"
                                  : "unexpected end of template, expected '}}'");
            if (balance.empty()) {
                end_pos_ = pos_;
                if (block) {
                    if (starts_with(pos_, "-%}") || starts_with(pos_, "+%}")) {
                        pos_ += 3;
                        return src_[pos_ - 3];
                    }
                    if (starts_with(pos_, "%}")) {
                        pos_ += 2;
                        return 0;
                    }
                } else {
                    if (starts_with(pos_, "-}}")) {
                        pos_ += 3;
                        return '-';
                    }
                    if (starts_with(pos_, "}}")) {
                        pos_ += 2;
                        return 0;
                    }
                }
            }
            const char c = src_[pos_];
            if (c == '\'' || c == '"') {
                lex_string();
            } else if (is_digit(c)) {
                lex_number();
            } else if (is_name_start(c)) {
                const size_t start = pos_;
                while (pos_ < n && is_name_char(src_[pos_])) ++pos_;
                emit(TokenType::Name, src_.substr(start, pos_ - start), start);
            } else {
                lex_operator(balance);
            }
        }
    }

    void lex_operator(std::vector<char>& balance) {
        static const char* const two[] = {"//", "**", "==", "!=", "<=", ">="};
        for (const char* op : two) {
            if (starts_with(pos_, op)) {
                emit(TokenType::Operator, op, pos_);
                pos_ += 2;
                return;
            }
        }
        const char c = src_[pos_];
        if (std::string_view("+-*/%~<>=()[]{},.:|;").find(c) == std::string_view::npos) {
            error(pos_, std::string("unexpected char '") + c + "'");
        }
        if (c == '(' || c == '[' || c == '{') {
            balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
        } else if (c == ')' || c == ']' || c == '}') {
            if (balance.empty() || balance.back() != c) error(pos_, std::string("unexpected '") + c + "'");
            balance.pop_back();
        }
        emit(TokenType::Operator, std::string(1, c), pos_);
        ++pos_;
    }

    void lex_number() {
        const size_t start = pos_;
        const size_t n = src_.size();
        const bool after_dot =
            !out_.empty() && out_.back().type == TokenType::Operator && out_.back().text == ".";
        auto digits = [&](auto pred) {
            while (pos_ < n &&
                   (pred(src_[pos_]) || (src_[pos_] == '_' && pos_ + 1 < n && pred(src_[pos_ + 1]))))
                ++pos_;
        };
        int base = 10;
        if (src_[pos_] == '0' && pos_ + 2 < n &&
            std::string_view("xXoObB").find(src_[pos_ + 1]) != std::string_view::npos) {
            const char b = static_cast<char>(std::tolower(static_cast<unsigned char>(src_[pos_ + 1])));
            base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
            pos_ += 2;
            digits([base](char c) {
                const int v = hex_value(c);
                return v >= 0 && v < base;
            });
        } else {
            digits(is_digit);
        }
        bool is_float = false;
        if (base == 10 && !after_dot) {
            if (pos_ + 1 < n && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
                is_float = true;
                ++pos_;
                digits(is_digit);
            }
            if (pos_ < n && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
                size_t p = pos_ + 1;
                if (p < n && (src_[p] == '+' || src_[p] == '-')) ++p;
                if (p < n && is_digit(src_[p])) {
                    is_float = true;
                    pos_ = p;
                    digits(is_digit);
                }
            }
        }
        std::string text;
        for (size_t i = start + (base == 10 ? 0 : 2); i < pos_; ++i) {
            if (src_[i] != '_') text += src_[i];
        }
        Token& t =
            emit(is_float ? TokenType::Float : TokenType::Integer, src_.substr(start, pos_ - start), start);
        errno = 0;
        if (is_float) {
            t.float_value = std::strtod(text.c_str(), nullptr);
        } else {
            t.int_value = std::strtoll(text.c_str(), nullptr, base);
            if (errno == ERANGE) error(start, "integer literal too large");
        }
    }

    void lex_string() {
        const size_t start = pos_;
        const char quote = src_[pos_++];
        const size_t n = src_.size();
        std::string value;
        while (true) {
            if (pos_ >= n) error(start, "unterminated string");
            const char c = src_[pos_];
            if (c == quote) {
                ++pos_;
                break;
            }
            if (c != '\\' || pos_ + 1 >= n) {
                value += c;
                ++pos_;
                continue;
            }
            const char e = src_[pos_ + 1];
            pos_ += 2;
            switch (e) {
                case 'n':
                    value += '\n';
                    break;
                case 't':
                    value += '\t';
                    break;
                case 'r':
                    value += '\r';
                    break;
                case 'a':
                    value += '\a';
                    break;
                case 'b':
                    value += '\b';
                    break;
                case 'f':
                    value += '\f';
                    break;
                case 'v':
                    value += '\v';
                    break;
                case '\\':
                    value += '\\';
                    break;
                case '\'':
                    value += '\'';
                    break;
                case '"':
                    value += '"';
                    break;
                case '\n':
                    break;  // line continuation
                case 'x':
                case 'u':
                case 'U': {
                    const int len = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    char32_t cp = 0;
                    for (int i = 0; i < len; ++i) {
                        const int v = pos_ < n ? hex_value(src_[pos_]) : -1;
                        if (v < 0) error(pos_, std::string("truncated \\") + e + " escape");
                        cp = cp * 16 + static_cast<char32_t>(v);
                        ++pos_;
                    }
                    utf8_append(value, cp);
                    break;
                }
                default:
                    if (e >= '0' && e <= '7') {
                        char32_t cp = static_cast<char32_t>(e - '0');
                        for (int i = 0; i < 2 && pos_ < n && src_[pos_] >= '0' && src_[pos_] <= '7'; ++i) {
                            cp = cp * 8 + static_cast<char32_t>(src_[pos_++] - '0');
                        }
                        utf8_append(value, cp);
                    } else {  // unknown escapes keep their backslash, as in Python
                        value += '\\';
                        value += e;
                    }
            }
        }
        emit(TokenType::String, std::move(value), start);
    }

    std::string src_;
    LexerOptions o_;
    std::vector<size_t> line_starts_;
    std::vector<Token> out_;
    size_t pos_ = 0;
    size_t end_pos_ = 0;         // where the current tag's end delimiter starts
    bool line_starting_ = true;  // the next text starts at the beginning of a line
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const LexerOptions& options) {
    return Lexer(source, options).run();
}

}  // namespace engine::jinja
