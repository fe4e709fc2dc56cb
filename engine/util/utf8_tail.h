// Whether text ends in the middle of a UTF-8 character: the streaming detokenizer holds such a tail back
// and the reasoning budget waits for it to end. Shared by the tokenizer and the grammar libraries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace engine {

// The bytes at the end of `s` that start a UTF-8 sequence not yet complete (0 when the last character is
// whole, or when the bytes are not UTF-8 at all).
inline size_t incomplete_utf8_tail(std::string_view s) {
    // Look back over at most three bytes for the lead byte of the last sequence.
    for (size_t k = 1; k <= 3 && k <= s.size(); ++k) {
        const uint8_t b = uint8_t(s[s.size() - k]);
        if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
        size_t need = 0;
        if ((b & 0xE0) == 0xC0) {
            need = 2;
        } else if ((b & 0xF0) == 0xE0) {
            need = 3;
        } else if ((b & 0xF8) == 0xF0) {
            need = 4;
        }
        return need > k ? k : 0;
    }
    return 0;
}

}  // namespace engine
