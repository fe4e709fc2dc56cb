// A set of code points: sorted, disjoint, non-adjacent inclusive ranges plus an ASCII bitmap for the
// common case. Negated GBNF classes are stored as their complement, so matching is one lookup.
#pragma once

#include <cstdint>
#include <vector>

namespace engine::gbnf {

struct CharRange {
    uint32_t lo;
    uint32_t hi;  // inclusive
    bool operator==(const CharRange&) const = default;
};

class CharSet {
  public:
    CharSet() = default;
    // Normalizes (sorts, merges) the ranges; with negate, stores the complement within
    // [0, U+10FFFF].
    explicit CharSet(std::vector<CharRange> ranges, bool negate = false);
    static CharSet single(uint32_t cp) { return CharSet({{cp, cp}}); }
    static CharSet any();

    bool contains(uint32_t cp) const {
        if (cp < 128) return (ascii_[cp >> 6] >> (cp & 63)) & 1;
        return contains_slow(cp);
    }
    // Whether any code point in [lo, hi] is in the set.
    bool intersects(uint32_t lo, uint32_t hi) const;
    bool empty() const { return ranges_.empty(); }
    const std::vector<CharRange>& ranges() const { return ranges_; }
    uint64_t size() const;  // number of code points
    bool operator==(const CharSet& o) const { return ranges_ == o.ranges_; }

  private:
    bool contains_slow(uint32_t cp) const;
    std::vector<CharRange> ranges_;
    uint64_t ascii_[2] = {0, 0};
};

}  // namespace engine::gbnf
