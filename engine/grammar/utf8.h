// UTF-8 helpers shared by the GBNF parser, the matcher and the regex engine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace engine::gbnf {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// Appends the UTF-8 encoding of cp (cp <= kMaxCodePoint).
void append_utf8(std::string& out, uint32_t cp);

// Decodes one code point at s[pos]; on success advances pos and returns true. Rejects invalid,
// truncated and overlong sequences (pos is left unchanged then).
bool decode_utf8(std::string_view s, size_t& pos, uint32_t& cp);

// An incomplete UTF-8 sequence carried between tokens: `len` bytes expected in total, `have`
// seen so far, `value` their payload bits. len == 0 means "no partial sequence".
struct Utf8Partial {
    uint32_t value = 0;
    uint8_t len = 0;
    uint8_t have = 0;

    bool empty() const { return len == 0; }
    bool operator==(const Utf8Partial&) const = default;
    // Packs into 25 bits (0 when empty) for use in cache keys.
    uint32_t pack() const { return len == 0 ? 0 : (value << 4) | (uint32_t(len - 1) << 2) | (have - 1); }
    static Utf8Partial unpack(uint32_t p) {
        if (p == 0) return {};
        return {p >> 4, uint8_t(((p >> 2) & 3) + 1), uint8_t((p & 3) + 1)};
    }
    // The inclusive range of code points this sequence can still complete to (empty if lo > hi,
    // e.g. for an overlong prefix such as E0 80).
    void completions(uint32_t& lo, uint32_t& hi) const;
};

// Result of feeding one byte to a (possibly partial) sequence.
enum class Utf8Step { Complete, Partial, Invalid };

// Feeds byte b: Complete sets cp (and resets part), Partial updates part, Invalid means the byte
// cannot continue (or start) a valid sequence.
Utf8Step utf8_feed(Utf8Partial& part, uint8_t b, uint32_t& cp);

}  // namespace engine::gbnf
