#include "engine/chat/jinja_strings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_value.h"

namespace engine::jinja {

namespace {

// Decode the code point starting at s[pos]; sets `len` to its byte length (1 for invalid bytes).
char32_t decode_at(std::string_view s, size_t pos, size_t& len) {
    const auto b0 = static_cast<unsigned char>(s[pos]);
    int n = 0;
    char32_t cp = 0;
    if (b0 < 0x80) {
        len = 1;
        return b0;
    } else if ((b0 & 0xE0) == 0xC0) {
        n = 1;
        cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        n = 2;
        cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        n = 3;
        cp = b0 & 0x07;
    } else {
        len = 1;
        return 0xFFFD;
    }
    for (int i = 1; i <= n; ++i) {
        if (pos + i >= s.size()) {
            len = 1;
            return 0xFFFD;
        }
        const auto b = static_cast<unsigned char>(s[pos + i]);
        if ((b & 0xC0) != 0x80) {
            len = 1;
            return 0xFFFD;
        }
        cp = (cp << 6) | (b & 0x3F);
    }
    len = static_cast<size_t>(n) + 1;
    return cp;
}

// Start of the code point that ends at byte `end` (exclusive).
size_t prev_start(std::string_view s, size_t end) {
    size_t p = end - 1;
    for (int i = 0; i < 3 && p > 0 && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80; ++i) --p;
    size_t len = 0;
    decode_at(s, p, len);
    return p + len == end ? p : end - 1;
}

bool is_ascii_alpha(char32_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
char32_t to_upper(char32_t c) {
    return c >= 'a' && c <= 'z' ? c - 32 : c;
}
char32_t to_lower(char32_t c) {
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

// Letters for title-casing: ASCII letters and (without case mapping) anything non-ASCII that is
// not a space, so "héllo" titles as "Héllo".
bool is_cased(char32_t c) {
    return is_ascii_alpha(c) || (c >= 0x80 && !py_isspace(c));
}

template <typename F>
std::string map_code_points(std::string_view s, F&& f) {
    std::string out;
    out.reserve(s.size());
    for (size_t pos = 0; pos < s.size();) {
        size_t len = 0;
        const char32_t cp = decode_at(s, pos, len);
        if (cp < 0x80) {
            out += static_cast<char>(f(cp));
        } else {
            f(cp);  // non-ASCII: no case mapping, keep the original bytes
            out.append(s.substr(pos, len));
        }
        pos += len;
    }
    return out;
}

}  // namespace

std::u32string utf8_decode(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    for (size_t pos = 0; pos < s.size();) {
        size_t len = 0;
        out.push_back(decode_at(s, pos, len));
        pos += len;
    }
    return out;
}

void utf8_append(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string utf8_encode(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t cp : s) utf8_append(out, cp);
    return out;
}

size_t utf8_length(std::string_view s) {
    size_t n = 0;
    for (size_t pos = 0; pos < s.size();) {
        size_t len = 0;
        decode_at(s, pos, len);
        pos += len;
        ++n;
    }
    return n;
}

bool py_isspace(char32_t c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

std::string py_strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
    std::u32string set;
    if (chars) set = utf8_decode(*chars);
    auto strip_it = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : py_isspace(c); };
    size_t begin = 0, end = s.size();
    while (left && begin < end) {
        size_t len = 0;
        if (!strip_it(decode_at(s, begin, len))) break;
        begin += len;
    }
    while (right && end > begin) {
        const size_t p = prev_start(s, end);
        size_t len = 0;
        if (!strip_it(decode_at(s, p, len))) break;
        end = p;
    }
    return std::string(s.substr(begin, end - begin));
}

std::vector<std::string> py_split(std::string_view s, const std::optional<std::string>& sep,
                                  int64_t maxsplit) {
    std::vector<std::string> out;
    if (sep) {
        if (sep->empty()) fail("empty separator");
        size_t pos = 0;
        while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
            const size_t hit = s.find(*sep, pos);
            if (hit == std::string_view::npos) break;
            out.emplace_back(s.substr(pos, hit - pos));
            pos = hit + sep->size();
        }
        out.emplace_back(s.substr(pos));
        return out;
    }
    size_t pos = 0;
    while (pos < s.size()) {
        size_t len = 0;
        // skip a whitespace run
        while (pos < s.size() && py_isspace(decode_at(s, pos, len))) pos += len;
        if (pos >= s.size()) break;
        if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
            std::string rest(s.substr(pos));
            out.push_back(py_strip(rest, std::nullopt, false, true));
            return out;
        }
        const size_t start = pos;
        while (pos < s.size() && !py_isspace(decode_at(s, pos, len))) pos += len;
        out.emplace_back(s.substr(start, pos - start));
    }
    return out;
}

std::vector<std::string> py_rsplit(std::string_view s, const std::optional<std::string>& sep,
                                   int64_t maxsplit) {
    if (maxsplit < 0) return py_split(s, sep, -1);
    std::vector<std::string> out;
    if (sep) {
        if (sep->empty()) fail("empty separator");
        size_t end = s.size();
        while (static_cast<int64_t>(out.size()) < maxsplit) {
            if (end < sep->size()) break;
            const size_t hit = s.rfind(*sep, end - sep->size());
            if (hit == std::string_view::npos) break;
            out.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
            end = hit;
        }
        out.emplace_back(s.substr(0, end));
    } else {
        size_t end = s.size();
        while (end > 0) {
            size_t len = 0;
            while (end > 0 && py_isspace(decode_at(s, prev_start(s, end), len))) end = prev_start(s, end);
            if (end == 0) break;
            if (static_cast<int64_t>(out.size()) >= maxsplit) {
                out.push_back(py_strip(s.substr(0, end), std::nullopt, true, false));
                break;
            }
            size_t start = end;
            while (start > 0 && !py_isspace(decode_at(s, prev_start(s, start), len)))
                start = prev_start(s, start);
            out.emplace_back(s.substr(start, end - start));
            end = start;
        }
    }
    std::reverse(out.begin(), out.end());
    return out;
}

std::vector<std::string> py_splitlines(std::string_view s, bool keepends) {
    std::vector<std::string> out;
    size_t start = 0, pos = 0;
    while (pos < s.size()) {
        const char c = s[pos];
        size_t brk = 0;
        if (c == '\r' && pos + 1 < s.size() && s[pos + 1] == '\n') {
            brk = 2;
        } else if (c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\x1c' || c == '\x1d' ||
                   c == '\x1e') {
            brk = 1;
        }
        if (brk) {
            out.emplace_back(s.substr(start, (keepends ? pos + brk : pos) - start));
            pos += brk;
            start = pos;
        } else {
            ++pos;
        }
    }
    if (start < s.size()) out.emplace_back(s.substr(start));
    return out;
}

std::string py_replace(std::string_view s, std::string_view from, std::string_view to, int64_t count) {
    std::string out;
    int64_t done = 0;
    if (from.empty()) {
        // Python inserts `to` before every code point and at the end.
        size_t pos = 0;
        while (pos < s.size()) {
            if (count < 0 || done < count) {
                out += to;
                ++done;
            }
            size_t len = 0;
            decode_at(s, pos, len);
            out.append(s.substr(pos, len));
            pos += len;
        }
        if (count < 0 || done < count) out += to;
        return out;
    }
    size_t pos = 0;
    while (count < 0 || done < count) {
        const size_t hit = s.find(from, pos);
        if (hit == std::string_view::npos) break;
        out.append(s.substr(pos, hit - pos));
        out += to;
        pos = hit + from.size();
        ++done;
    }
    out.append(s.substr(pos));
    return out;
}

std::string py_upper(std::string_view s) {
    return map_code_points(s, [](char32_t c) { return to_upper(c); });
}

std::string py_lower(std::string_view s) {
    return map_code_points(s, [](char32_t c) { return to_lower(c); });
}

std::string py_title(std::string_view s) {
    bool prev_cased = false;
    return map_code_points(s, [&](char32_t c) {
        const bool cased = is_cased(c);
        const char32_t r = cased ? (prev_cased ? to_lower(c) : to_upper(c)) : c;
        prev_cased = cased;
        return r;
    });
}

std::string py_capitalize(std::string_view s) {
    bool first = true;
    return map_code_points(s, [&](char32_t c) {
        const char32_t r = first ? to_upper(c) : to_lower(c);
        first = false;
        return r;
    });
}

size_t py_count(std::string_view s, std::string_view sub) {
    if (sub.empty()) return utf8_length(s) + 1;
    size_t n = 0;
    for (size_t pos = s.find(sub); pos != std::string_view::npos; pos = s.find(sub, pos + sub.size())) ++n;
    return n;
}

int64_t py_find(std::string_view s, std::string_view sub, bool reverse) {
    const size_t hit = reverse ? s.rfind(sub) : s.find(sub);
    if (hit == std::string_view::npos) return -1;
    return static_cast<int64_t>(utf8_length(s.substr(0, hit)));
}

std::vector<int64_t> py_slice_indices(int64_t length, std::optional<int64_t> start,
                                      std::optional<int64_t> stop, std::optional<int64_t> step) {
    const int64_t st = step.value_or(1);
    if (st == 0) fail("slice step cannot be zero");
    auto clamp = [&](int64_t i) {
        if (i < 0) i += length;
        if (st > 0) return std::clamp<int64_t>(i, 0, length);
        return std::clamp<int64_t>(i, -1, length - 1);
    };
    const int64_t b = start ? clamp(*start) : (st > 0 ? 0 : length - 1);
    const int64_t e = stop ? clamp(*stop) : (st > 0 ? length : -1);
    std::vector<int64_t> out;
    if (st > 0) {
        for (int64_t i = b; i < e; i += st) out.push_back(i);
    } else {
        for (int64_t i = b; i > e; i += st) out.push_back(i);
    }
    return out;
}

namespace {

// %s with flags/width/precision from `spec` ("%-8.3"), counting code points as Python does.
std::string pad_percent_s(std::string text, const std::string& spec) {
    const bool left = spec.find('-') != std::string::npos;
    size_t i = 1;
    while (i < spec.size() && std::string_view("-+ #0").find(spec[i]) != std::string_view::npos) ++i;
    size_t width = 0;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i])))
        width = width * 10 + (spec[i++] - '0');
    if (i < spec.size() && spec[i] == '.') {
        size_t precision = 0;
        while (++i < spec.size()) precision = precision * 10 + (spec[i] - '0');
        text = utf8_encode(utf8_decode(text).substr(0, precision));
    }
    const size_t len = utf8_length(text);
    if (len >= width) return text;
    return left ? text + std::string(width - len, ' ') : std::string(width - len, ' ') + text;
}

}  // namespace

std::string py_percent_format(std::string_view fmt, const std::vector<Value>& args) {
    constexpr size_t kMaxFormatField = 4096;
    std::string out;
    size_t next = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') {
            out += fmt[i];
            continue;
        }
        if (++i >= fmt.size()) fail("incomplete format");
        // %[flags][width][.precision]type
        std::string spec = "%";
        while (i < fmt.size() && std::string_view("-+ #0").find(fmt[i]) != std::string_view::npos)
            spec += fmt[i++];
        // Width and precision are bounded: a template's "%99999999999s" would otherwise ask for that much
        // memory (or overflow the count). Python fails too (with a far higher limit); templates use a few.
        auto field = [&](const char* what) {
            size_t v = 0;
            while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) {
                v = v * 10 + size_t(fmt[i] - '0');
                if (v > kMaxFormatField)
                    fail(std::string("format ") + what + " exceeds the limit of " + std::to_string(kMaxFormatField));
                spec += fmt[i++];
            }
        };
        field("width");
        if (i < fmt.size() && fmt[i] == '.') {
            spec += fmt[i++];
            field("precision");
        }
        if (i >= fmt.size()) fail("incomplete format");
        const char type = fmt[i];
        if (type == '%') {
            out += '%';
            continue;
        }
        if (next >= args.size()) fail("not enough arguments for format string");
        const Value& arg = args[next++];
        switch (type) {
            case 's':
            case 'r':
                out += pad_percent_s(type == 's' ? arg.str() : arg.repr(), spec);
                break;
            case 'c':
                if (!arg.is_int()) fail("%c requires an int");
                utf8_append(out, static_cast<char32_t>(arg.as_int()));
                break;
            case 'd':
            case 'i':
            case 'x':
            case 'X':
            case 'o': {
                if (!arg.is_number()) {
                    fail("%" + std::string(1, type) + " format: a number is required, not " +
                         arg.type_name());
                }
                const auto n = arg.is_float() ? static_cast<long long>(std::trunc(arg.as_double()))
                                              : static_cast<long long>(arg.as_int());
                out += format_c(spec + (type == 'i' ? "lld" : std::string("ll") + type), n);
                break;
            }
            case 'f':
            case 'F':
            case 'e':
            case 'E':
            case 'g':
            case 'G':
                if (!arg.is_number()) fail("must be real number, not " + arg.type_name());
                out += format_c(spec + type, arg.as_double());
                break;
            default:
                fail(std::string("unsupported format character '") + type + "'");
        }
    }
    if (next < args.size()) fail("not all arguments converted during string formatting");
    return out;
}

}  // namespace engine::jinja
