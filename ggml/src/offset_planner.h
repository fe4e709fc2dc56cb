// Offsets in one growing block of memory for tensors with lifetimes: best fit among freed ranges,
// else at the end. Shared by the graph allocator and the backend scheduler (one planner per backend).
#pragma once

#include <cstddef>
#include <iterator>
#include <map>

namespace ggml {

class OffsetPlanner {
  public:
    static constexpr size_t kAlign = 64;
    static size_t aligned(size_t x) { return (x + kAlign - 1) & ~(kAlign - 1); }

    size_t alloc(size_t size) {
        size = aligned(size ? size : 1);
        // best fit among free blocks
        auto best = free_.end();
        for (auto it = free_.begin(); it != free_.end(); ++it)
            if (it->second >= size && (best == free_.end() || it->second < best->second)) best = it;
        if (best != free_.end()) {
            const size_t off = best->first, rest = best->second - size;
            free_.erase(best);
            if (rest) free_[off + size] = rest;
            return off;
        }
        // Extend: if the last free block touches the end, grow it.
        if (!free_.empty()) {
            auto last = std::prev(free_.end());
            if (last->first + last->second == end_) {
                const size_t off = last->first;
                free_.erase(last);
                end_ = off + size;
                return off;
            }
        }
        const size_t off = end_;
        end_ += size;
        return off;
    }
    void release(size_t off, size_t size) {
        size = aligned(size ? size : 1);
        auto it = free_.emplace(off, size).first;
        // merge with next
        auto next = std::next(it);
        if (next != free_.end() && it->first + it->second == next->first) {
            it->second += next->second;
            free_.erase(next);
        }
        // merge with previous
        if (it != free_.begin()) {
            auto prev = std::prev(it);
            if (prev->first + prev->second == it->first) {
                prev->second += it->second;
                free_.erase(it);
            }
        }
    }
    size_t size() const { return end_; }

  private:
    std::map<size_t, size_t> free_;
    size_t end_ = 0;
};

}  // namespace ggml
