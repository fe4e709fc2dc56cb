// Graph allocator: lifetime-based reuse of intermediate memory.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "ggml/backend.h"

namespace ggml {

namespace {

constexpr size_t kAlign = 64;

size_t aligned(size_t x) { return (x + kAlign - 1) & ~(kAlign - 1); }

// First-fit free list over a virtual address range that grows at the end.
class OffsetPlanner {
public:
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

Tensor* root_of(Tensor* t) { return t->view_src ? t->view_src : t; }

bool needs_memory(const Tensor* t) { return t->data == nullptr && t->view_src == nullptr; }

}  // namespace

size_t GraphAllocator::allocate(Graph& g) {
    // Remaining readers of each memory root; a root is freed when its count drops to zero.
    std::unordered_map<Tensor*, int> readers;
    for (Tensor* n : g.nodes)
        for (Tensor* s : n->src)
            if (s) ++readers[root_of(s)];
    for (Tensor* n : g.nodes)
        if (n->view_src) ++readers[n->view_src];  // a view keeps its source alive until the view is read

    std::unordered_map<Tensor*, size_t> offset;
    OffsetPlanner planner;
    auto place = [&](Tensor* t) {
        if (needs_memory(t) && !offset.count(t)) offset[t] = planner.alloc(t->nbytes());
    };
    // Inputs first; they stay for the whole graph.
    for (Tensor* l : g.leafs) place(l);
    for (Tensor* n : g.nodes) {
        place(n);
        auto drop = [&](Tensor* root) {
            auto it = readers.find(root);
            if (it == readers.end() || --it->second > 0) return;
            if (!offset.count(root) || (root->flags & (kFlagOutput | kFlagInput)) || root->op == Op::None) return;
            planner.release(offset[root], root->nbytes());
        };
        for (Tensor* s : n->src)
            if (s) drop(root_of(s));
        if (n->view_src) drop(n->view_src);
    }

    const size_t need = planner.size();
    if (!buffer_ || buffer_->size < need) {
        buffer_.reset();
        buffer_ = backend_.alloc_buffer(need + need / 8);
    }
    char* base = (char*)buffer_->base;
    for (auto& [t, off] : offset) {
        t->data = base + off;
        t->buffer = buffer_.get();
    }
    // Views get their data once their source has it (views of views resolve through view_src).
    for (Tensor* n : g.nodes)
        if (n->view_src && n->view_src->data) {
            n->data = (char*)n->view_src->data + n->view_offs;
            n->buffer = n->view_src->buffer;
        }
    return need;
}

}  // namespace ggml
