#include "engine/grammar/utf8.h"

namespace engine::gbnf {

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

static constexpr uint32_t kMinForLen[5] = {0, 0, 0x80, 0x800, 0x10000};
static constexpr uint32_t kMaxForLen[5] = {0, 0x7F, 0x7FF, 0xFFFF, kMaxCodePoint};

Utf8Step utf8_feed(Utf8Partial& part, uint8_t b, uint32_t& cp) {
    if (part.len == 0) {
        if (b < 0x80) {
            cp = b;
            return Utf8Step::Complete;
        }
        // C0/C1 only start overlong encodings; F5..FF lie beyond U+10FFFF.
        if (b >= 0xC2 && b <= 0xDF) {
            part = {uint32_t(b & 0x1F), 2, 1};
        } else if (b >= 0xE0 && b <= 0xEF) {
            part = {uint32_t(b & 0x0F), 3, 1};
        } else if (b >= 0xF0 && b <= 0xF4) {
            part = {uint32_t(b & 0x07), 4, 1};
        } else {
            return Utf8Step::Invalid;
        }
        return Utf8Step::Partial;
    }
    if ((b & 0xC0) != 0x80) return Utf8Step::Invalid;
    Utf8Partial next{(part.value << 6) | (b & 0x3F), part.len, uint8_t(part.have + 1)};
    uint32_t lo, hi;
    next.completions(lo, hi);
    if (lo > hi) return Utf8Step::Invalid;  // overlong or beyond U+10FFFF
    if (next.have == next.len) {
        cp = next.value;
        part = {};
        return Utf8Step::Complete;
    }
    part = next;
    return Utf8Step::Partial;
}

void Utf8Partial::completions(uint32_t& lo, uint32_t& hi) const {
    const int missing = len - have;
    lo = value << (6 * missing);
    hi = lo | ((1u << (6 * missing)) - 1);
    if (lo < kMinForLen[len]) lo = kMinForLen[len];
    if (hi > kMaxForLen[len]) hi = kMaxForLen[len];
}

bool decode_utf8(std::string_view s, size_t& pos, uint32_t& cp) {
    Utf8Partial part;
    for (size_t i = pos; i < s.size(); ++i) {
        switch (utf8_feed(part, uint8_t(s[i]), cp)) {
            case Utf8Step::Complete:
                pos = i + 1;
                return true;
            case Utf8Step::Partial:
                break;
            case Utf8Step::Invalid:
                return false;
        }
    }
    return false;
}

}  // namespace engine::gbnf
