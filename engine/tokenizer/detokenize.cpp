// token_to_piece and detokenize, as llama.cpp renders tokens.
#include <algorithm>

#include "engine/tokenizer/unicode.h"
#include "engine/tokenizer/vocab_impl.h"

namespace engine {

namespace detail {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581

std::string unescape_spaces(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        if (s.substr(i, kSpaceMark.size()) == kSpaceMark) {
            out += ' ';
            i += kSpaceMark.size();
        } else {
            out += s[i++];
        }
    }
    return out;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// "<0xXX>" -> the byte, or -1.
int parse_byte_token(std::string_view s) {
    if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
    const int hi = hex_digit(s[3]), lo = hex_digit(s[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// Undoes GPT-2's byte alphabet; a code point outside it is shown as llama.cpp shows it.
std::string decode_byte_alphabet(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (uint32_t cp : unicode::decode_utf8(text)) {
        const int b = unicode::unicode_to_byte(cp);
        if (b >= 0) {
            out += char(b);
            continue;
        }
        out += "[UNK_BYTE_0x";
        for (char c : unicode::encode_utf8(cp)) {
            out += kHex[uint8_t(c) >> 4];
            out += kHex[uint8_t(c) & 15];
        }
        out += text;
        out += ']';
    }
    return out;
}

}  // namespace

std::string render_piece(const VocabImpl& v, Token token) {
    const TokenData& t = v.tokens[size_t(token)];
    if (t.attr & (kAttrUnknown | kAttrControl | kAttrUserDefined)) return t.text;
    if (t.attr & kAttrNormal)
        return v.type == VocabType::BPE ? decode_byte_alphabet(t.text) : unescape_spaces(t.text);
    if (t.attr & kAttrByte) {
        int b = parse_byte_token(t.text);
        if (b < 0 && v.type == VocabType::BPE) {
            const auto cps = unicode::decode_utf8(t.text);
            if (cps.size() == 1) b = unicode::unicode_to_byte(cps[0]);
        }
        return b < 0 ? t.text : std::string(1, char(b));
    }
    return "";  // undefined and unused tokens render as nothing
}

}  // namespace detail

namespace {

// The tokenizer's clean-up of spaces (HF's clean_up_tokenization_spaces, as llama.cpp applies it).
std::string clean_up_spaces(const std::string& s) {
    if (s.empty()) return s;
    // 1: no space before ? ! . ,
    std::string a(1, s[0]);
    for (size_t i = 1; i < s.size(); ++i) {
        const char x = s[i];
        if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) a.pop_back();
        a += x;
    }
    // 2: " ' " -> "'" (the space after is consumed, so it cannot start another match)
    std::string t = a, b(1, t[0]);
    for (size_t i = 1; i < t.size(); ++i) {
        const char x = t[i];
        if (x == '\'' && i + 1 < t.size() && t[i - 1] == ' ' && t[i + 1] == ' ') {
            b.pop_back();
            t[++i] = '\0';
        }
        b += x;
    }
    // 3: no space before 's 'm 're 've
    std::string c(1, b[0]);
    for (size_t i = 1; i < b.size(); ++i) {
        const char x = b[i];
        if (b[i - 1] == ' ' && x == '\'' && i + 1 < b.size()) {
            const char x1 = b[i + 1];
            const char x2 = i + 2 < b.size() ? b[i + 2] : '\0';
            if (x1 == 's' || x1 == 'm' || (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) c.pop_back();
        }
        c += x;
    }
    return c;
}

}  // namespace

std::string Vocab::token_to_piece(Token token, bool special, int lstrip) const {
    const auto& v = *impl_;
    if (!valid(token)) return "";
    if (!special && (v.attr(token) & (kAttrUnknown | kAttrControl))) return "";
    std::string_view piece = v.pieces[size_t(token)];
    for (int i = 0; i < lstrip && !piece.empty() && piece[0] == ' '; ++i) piece.remove_prefix(1);
    return std::string(piece);
}

std::string Vocab::detokenize(std::span<const Token> tokens, bool remove_special,
                              bool unparse_special) const {
    const auto& v = *impl_;
    bool remove_space = v.add_space_prefix;  // the prefix space tokenize() added
    if (remove_special && v.add_bos && !tokens.empty() && tokens.front() == v.bos) {
        remove_space = false;
        tokens = tokens.subspan(1);
    }
    if (remove_special && v.add_eos && !tokens.empty() && tokens.back() == v.eos)
        tokens = tokens.first(tokens.size() - 1);
    std::string text;
    for (Token t : tokens) {
        text += token_to_piece(t, unparse_special, remove_space ? 1 : 0);
        remove_space = false;
    }
    return v.clean_spaces ? clean_up_spaces(text) : text;
}

}  // namespace engine
