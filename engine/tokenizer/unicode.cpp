#include "engine/tokenizer/unicode.h"

#include <algorithm>
#include <array>

#include "engine/tokenizer/unicode_tables.h"

namespace engine::unicode {

namespace {

constexpr uint8_t kWhitespaceBit = 0x80;

// One byte per code point (category, plus the White_Space bit): 1.1 MB, built once, so the regex
// matcher's hot path is a single load.
const std::vector<uint8_t>& flat_table() {
    static const std::vector<uint8_t> table = [] {
        std::vector<uint8_t> t(kMaxCodepoint + 1, uint8_t(Category::Cn));
        for (size_t i = 0; i < tables::kCategoryRuns_size; ++i) {
            const uint32_t begin = tables::kCategoryRuns[i].start;
            const uint32_t end =
                i + 1 < tables::kCategoryRuns_size ? tables::kCategoryRuns[i + 1].start : kMaxCodepoint + 1;
            std::fill(t.begin() + begin, t.begin() + end, tables::kCategoryRuns[i].category);
        }
        for (size_t i = 0; i < tables::kWhitespace_size; ++i) t[tables::kWhitespace[i]] |= kWhitespaceBit;
        return t;
    }();
    return table;
}

struct ByteMaps {
    std::array<std::string, 256> to_unicode;
    std::array<int16_t, 512> from_unicode;  // every mapped code point is below U+0200
};

const ByteMaps& byte_maps() {
    static const ByteMaps maps = [] {
        ByteMaps m;
        m.from_unicode.fill(-1);
        int next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            const int cp = printable ? b : next++;
            m.to_unicode[b] = encode_utf8(uint32_t(cp));
            m.from_unicode[cp] = int16_t(b);
        }
        return m;
    }();
    return maps;
}

}  // namespace

Category category(uint32_t cp) {
    if (cp > kMaxCodepoint) return Category::Cn;
    return Category(flat_table()[cp] & ~kWhitespaceBit);
}

bool is_whitespace(uint32_t cp) {
    return cp <= kMaxCodepoint && (flat_table()[cp] & kWhitespaceBit);
}

uint32_t to_lower(uint32_t cp) {
    const auto* begin = tables::kLowercase;
    const auto* end = begin + tables::kLowercase_size;
    const auto* it = std::lower_bound(begin, end, cp, [](const auto& p, uint32_t v) { return p.from < v; });
    return it != end && it->from == cp ? it->to : cp;
}

uint32_t nfd_first(uint32_t cp) {
    const auto* begin = tables::kNfdFirst;
    const auto* end = begin + tables::kNfdFirst_size;
    const auto* it = std::upper_bound(begin, end, cp, [](uint32_t v, const auto& r) { return v < r.first; });
    if (it == begin) return cp;
    --it;
    return cp <= it->last ? it->nfd : cp;
}

const char* version() {
    return tables::kUnicodeVersion;
}

std::vector<uint32_t> decode_utf8(std::string_view s) {
    std::vector<uint32_t> out;
    out.reserve(s.size());
    size_t i = 0;
    auto cont = [&](size_t k) { return i + k < s.size() && (uint8_t(s[i + k]) & 0xC0) == 0x80; };
    while (i < s.size()) {
        const uint8_t b = uint8_t(s[i]);
        uint32_t cp = kReplacement;
        size_t n = 1;
        if (b < 0x80) {
            cp = b;
        } else if ((b & 0xE0) == 0xC0 && cont(1)) {
            cp = (uint32_t(b & 0x1F) << 6) | (uint8_t(s[i + 1]) & 0x3F);
            n = 2;
        } else if ((b & 0xF0) == 0xE0 && cont(1) && cont(2)) {
            cp = (uint32_t(b & 0x0F) << 12) | (uint32_t(uint8_t(s[i + 1]) & 0x3F) << 6) |
                 (uint8_t(s[i + 2]) & 0x3F);
            n = 3;
        } else if ((b & 0xF8) == 0xF0 && cont(1) && cont(2) && cont(3)) {
            cp = (uint32_t(b & 0x07) << 18) | (uint32_t(uint8_t(s[i + 1]) & 0x3F) << 12) |
                 (uint32_t(uint8_t(s[i + 2]) & 0x3F) << 6) | (uint8_t(s[i + 3]) & 0x3F);
            n = 4;
        }
        // Overlong forms (C0 AF for '/') and values past U+10FFFF are not UTF-8: each of their bytes is a
        // replacement character, as llama.cpp decodes them.
        static constexpr uint32_t kMinOf[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (n > 1 && (cp < kMinOf[n] || cp > kMaxCodepoint)) {
            cp = kReplacement;
            n = 1;
        }
        out.push_back(cp);
        i += n;
    }
    return out;
}

void append_utf8(std::string& out, uint32_t cp) {
    if (cp <= 0x7F) {
        out += char(cp);
    } else if (cp <= 0x7FF) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp <= 0xFFFF) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp <= kMaxCodepoint) {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        append_utf8(out, kReplacement);
    }
}

std::string encode_utf8(uint32_t cp) {
    std::string s;
    append_utf8(s, cp);
    return s;
}

const std::string& byte_to_unicode(uint8_t b) {
    return byte_maps().to_unicode[b];
}

int unicode_to_byte(uint32_t cp) {
    return cp < 512 ? byte_maps().from_unicode[cp] : -1;
}


}  // namespace engine::unicode
