#include "engine/grammar/char_set.h"

#include <algorithm>

#include "engine/grammar/utf8.h"

namespace engine::gbnf {

CharSet::CharSet(std::vector<CharRange> ranges, bool negate) {
    std::sort(ranges.begin(), ranges.end(), [](CharRange a, CharRange b) { return a.lo < b.lo; });
    for (CharRange r : ranges) {
        if (r.lo > r.hi) continue;
        if (!ranges_.empty() && r.lo <= ranges_.back().hi + 1) {
            ranges_.back().hi = std::max(ranges_.back().hi, r.hi);
        } else {
            ranges_.push_back(r);
        }
    }
    if (negate) {
        std::vector<CharRange> comp;
        uint32_t next = 0;
        for (CharRange r : ranges_) {
            if (r.lo > next) comp.push_back({next, r.lo - 1});
            next = r.hi + 1;
        }
        if (next <= kMaxCodePoint) comp.push_back({next, kMaxCodePoint});
        ranges_ = std::move(comp);
    }
    for (CharRange r : ranges_) {
        for (uint32_t c = r.lo; c <= r.hi && c < 128; ++c) ascii_[c >> 6] |= uint64_t(1) << (c & 63);
    }
}

CharSet CharSet::any() {
    return CharSet({{0, kMaxCodePoint}});
}

bool CharSet::contains_slow(uint32_t cp) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), cp,
                               [](uint32_t c, const CharRange& r) { return c < r.lo; });
    return it != ranges_.begin() && cp <= (it - 1)->hi;
}

bool CharSet::intersects(uint32_t lo, uint32_t hi) const {
    // First range ending at or after lo; it intersects iff it starts at or before hi.
    auto it = std::lower_bound(ranges_.begin(), ranges_.end(), lo,
                               [](const CharRange& r, uint32_t c) { return r.hi < c; });
    return it != ranges_.end() && it->lo <= hi;
}

uint64_t CharSet::size() const {
    uint64_t n = 0;
    for (CharRange r : ranges_) n += uint64_t(r.hi) - r.lo + 1;
    return n;
}

}  // namespace engine::gbnf
