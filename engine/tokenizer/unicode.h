// Unicode helpers for the tokenizers: UTF-8 coding, general categories, White_Space, simple
// lowercasing, first-code-point NFD, and GPT-2's byte <-> printable code point mapping.
#pragma once

#include "engine/util/utf8_tail.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engine::unicode {

// Unicode general categories; the order matches the generated tables.
enum class Category : uint8_t {
    Cn,
    Lu,
    Ll,
    Lt,
    Lm,
    Lo,
    Mn,
    Mc,
    Me,
    Nd,
    Nl,
    No,
    Pc,
    Pd,
    Ps,
    Pe,
    Pi,
    Pf,
    Po,
    Sm,
    Sc,
    Sk,
    So,
    Zs,
    Zl,
    Zp,
    Cc,
    Cf,
    Cs,
    Co,
};
constexpr int kNumCategories = 30;

// Bit sets of categories, for \p{..} classes.
using CategoryMask = uint32_t;
constexpr CategoryMask bit(Category c) {
    return CategoryMask(1) << int(c);
}
constexpr CategoryMask kLetter =
    bit(Category::Lu) | bit(Category::Ll) | bit(Category::Lt) | bit(Category::Lm) | bit(Category::Lo);
constexpr CategoryMask kMark = bit(Category::Mn) | bit(Category::Mc) | bit(Category::Me);
constexpr CategoryMask kNumber = bit(Category::Nd) | bit(Category::Nl) | bit(Category::No);
constexpr CategoryMask kPunctuation = bit(Category::Pc) | bit(Category::Pd) | bit(Category::Ps) |
                                      bit(Category::Pe) | bit(Category::Pi) | bit(Category::Pf) |
                                      bit(Category::Po);
constexpr CategoryMask kSymbol =
    bit(Category::Sm) | bit(Category::Sc) | bit(Category::Sk) | bit(Category::So);
constexpr CategoryMask kSeparator = bit(Category::Zs) | bit(Category::Zl) | bit(Category::Zp);
// "Other" without unassigned: control, format, surrogate, private use.
constexpr CategoryMask kControl =
    bit(Category::Cc) | bit(Category::Cf) | bit(Category::Cs) | bit(Category::Co);

constexpr uint32_t kReplacement = 0xFFFD;
constexpr uint32_t kMaxCodepoint = 0x10FFFF;

Category category(uint32_t cp);
inline bool in(CategoryMask mask, uint32_t cp) {
    return (mask >> int(category(cp))) & 1;
}
bool is_whitespace(uint32_t cp);  // the White_Space property
uint32_t to_lower(uint32_t cp);   // simple lowercase mapping; cp itself if none
uint32_t nfd_first(uint32_t cp);  // first code point of the canonical decomposition
const char* version();            // Unicode version of the tables

// Length of the UTF-8 sequence that starts with this byte, judged from its high bits alone
// (1 for continuation bytes), as SentencePiece and llama.cpp split text into symbols.
inline size_t utf8_len(char c) {
    static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return kLen[uint8_t(c) >> 4];
}

// Decodes UTF-8; every byte of an invalid or truncated sequence becomes one U+FFFD.
std::vector<uint32_t> decode_utf8(std::string_view s);
void append_utf8(std::string& out, uint32_t cp);
std::string encode_utf8(uint32_t cp);

// GPT-2's byte-level BPE alphabet: each byte maps to a printable code point (bytes that are printable
// Latin-1 map to themselves, the others to U+0100 onwards).
const std::string& byte_to_unicode(uint8_t b);  // UTF-8 of the mapped code point
int unicode_to_byte(uint32_t cp);               // the byte, or -1 if cp is not in the alphabet

using engine::incomplete_utf8_tail;  // engine/util/utf8_tail.h

}  // namespace engine::unicode
