// Graph allocator: lifetime-based reuse of intermediate memory.
#include <algorithm>
#include <unordered_map>

#include "ggml/backend.h"
#include "offset_planner.h"

namespace ggml {

namespace {

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
