#include "engine/grammar/gbnf_text.h"

#include <cstdio>

#include "engine/grammar/utf8.h"

namespace engine::gbnf {

namespace {

std::string hex_escape(uint32_t cp) {
    char buf[16];
    if (cp <= 0xFF) {
        std::snprintf(buf, sizeof buf, "\\x%02X", unsigned(cp));
    } else if (cp <= 0xFFFF) {
        std::snprintf(buf, sizeof buf, "\\u%04X", unsigned(cp));
    } else {
        std::snprintf(buf, sizeof buf, "\\U%08X", unsigned(cp));
    }
    return buf;
}

// One code point inside [...]: printable ASCII as is, except the class metacharacters.
std::string class_char(uint32_t cp) {
    switch (cp) {
        case '\\':
            return "\\\\";
        case ']':
            return "\\]";
        case '[':
            return "\\[";
        case '-':
            return "\\-";
        case '"':
            return "\\\"";
        case '^':
            return "\\x5E";
        default:
            break;
    }
    if (cp >= 0x20 && cp < 0x7F) return std::string(1, char(cp));
    return hex_escape(cp);
}

std::string ranges_text(const std::vector<CharRange>& ranges) {
    std::string out;
    for (CharRange r : ranges) {
        out += class_char(r.lo);
        if (r.hi == r.lo) continue;
        if (r.hi > r.lo + 1) out += '-';
        out += class_char(r.hi);
    }
    return out;
}

}  // namespace

std::string gbnf_literal(std::string_view text) {
    std::string out = "\"";
    size_t pos = 0;
    while (pos < text.size()) {
        const auto c = uint8_t(text[pos]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7F) {
            out += hex_escape(c);
        } else if (c < 0x80) {
            out += char(c);
        } else {
            const size_t start = pos;
            uint32_t cp;
            if (decode_utf8(text, pos, cp)) {
                out.append(text.substr(start, pos - start));
                continue;
            }
            out += hex_escape(c);  // a stray byte: keep it as the code point of the same value
        }
        ++pos;
    }
    return out + "\"";
}

std::string gbnf_class(const CharSet& set) {
    const std::string positive = ranges_text(set.ranges());
    const CharSet complement(set.ranges(), true);
    const std::string negative = ranges_text(complement.ranges());
    if (!complement.empty() && negative.size() < positive.size()) return "[^" + negative + "]";
    return "[" + positive + "]";
}

std::string gbnf_rule_name(std::string_view text) {
    std::string out;
    bool dash = false;
    for (char c : text) {
        const bool ok =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
        if (ok) {
            out += c;
            dash = false;
        } else if (!dash) {
            out += '-';
            dash = true;
        }
    }
    return out;
}

}  // namespace engine::gbnf
