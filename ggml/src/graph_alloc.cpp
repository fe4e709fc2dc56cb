// Graph allocator: lifetime-based reuse of intermediate memory.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

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
    // Sources whose memory a node took over (see Backend::can_overwrite_src0): released with that node.
    std::unordered_set<Tensor*> handed_over;
    auto same_layout = [](const Tensor* a, const Tensor* b) {
        return a->type == b->type && std::equal(a->ne, a->ne + kMaxDims, b->ne) && std::equal(a->nb, a->nb + kMaxDims, b->nb);
    };
    // n may reuse src0's memory if n is its last reader, src0 owns that memory and nothing else reads it.
    auto take_over_src0 = [&](Tensor* n) {
        Tensor* s = n->src[0];
        if (!needs_memory(n) || offset.count(n) || !s || s->view_src || !offset.count(s)) return;
        if ((s->flags & (kFlagOutput | kFlagInput)) || s->op == Op::None || !same_layout(s, n)) return;
        if (!backend_.can_overwrite_src0(n)) return;
        int reads_here = 0;
        for (Tensor* x : n->src) reads_here += x == s;
        if (readers[s] != reads_here) return;
        offset[n] = offset[s];
        handed_over.insert(s);
    };
    // Inputs first; they stay for the whole graph.
    for (Tensor* l : g.leafs) place(l);
    for (Tensor* n : g.nodes) {
        take_over_src0(n);
        place(n);
        auto drop = [&](Tensor* root) {
            auto it = readers.find(root);
            if (it == readers.end() || --it->second > 0) return;
            if (!offset.count(root) || (root->flags & (kFlagOutput | kFlagInput)) || root->op == Op::None) return;
            if (handed_over.count(root)) return;
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
