#include "server/api/gbnf_prefix.h"

#include <cctype>

namespace api {

namespace {

bool is_name_char(char c) {
    return std::isalnum((unsigned char)c) || c == '-' || c == '_';
}

// Copies a quoted literal or a character class starting at gbnf[i] (honouring backslash escapes)
// and returns the index after it.
size_t copy_delimited(const std::string& gbnf, size_t i, char close, std::string& out) {
    out += gbnf[i++];
    while (i < gbnf.size()) {
        const char c = gbnf[i];
        out += c;
        ++i;
        if (c == '\\' && i < gbnf.size()) {
            out += gbnf[i++];
        } else if (c == close) {
            break;
        }
    }
    return i;
}

}  // namespace

std::string prefix_gbnf_rules(const std::string& gbnf, const std::string& prefix) {
    std::string out;
    out.reserve(gbnf.size() * 2);
    size_t i = 0;
    while (i < gbnf.size()) {
        const char c = gbnf[i];
        if (c == '"') {
            i = copy_delimited(gbnf, i, '"', out);
        } else if (c == '[') {
            i = copy_delimited(gbnf, i, ']', out);
        } else if (c == '#') {  // comment to the end of the line
            while (i < gbnf.size() && gbnf[i] != '\n') out += gbnf[i++];
        } else if (c == '<' && i + 1 < gbnf.size() && gbnf[i + 1] == '[') {  // <[token id]>
            while (i < gbnf.size() && gbnf[i] != '>') out += gbnf[i++];
        } else if (is_name_char(c) && !std::isdigit((unsigned char)c)) {
            const size_t start = i;
            while (i < gbnf.size() && is_name_char(gbnf[i])) ++i;
            out += prefix;
            out.append(gbnf, start, i - start);
        } else {
            out += c;
            ++i;
        }
    }
    return out;
}

std::string gbnf_literal(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default: out += c;
        }
    }
    return out + "\"";
}

}  // namespace api
