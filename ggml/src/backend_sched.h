// The plan of the backend scheduler (ggml/backend.h: BackendScheduler): where each node runs, the
// splits, and the copies of split inputs between backends. Kept apart from the execution so each part
// reads on its own.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "ggml/backend.h"
#include "ggml/ggml.h"

namespace ggml::sched {

// src's bytes (wherever `from` holds them) copied into dst, a tensor of the split's backend with the
// same shape and strides.
struct Copy {
    Tensor* src;
    Tensor* dst;
    Backend* from;
};

// While its split runs, node->src[slot] reads the copy instead of the original.
struct Swap {
    Tensor* node;
    int slot;
    Tensor* copy;
};

struct Split {
    Backend* backend = nullptr;
    Graph graph;               // the split's nodes in graph order (no view nodes: they compute nothing)
    std::vector<Copy> copies;  // made before the split runs
    std::vector<Swap> swaps;
};

struct Plan {
    std::vector<Split> splits;
    std::unordered_map<const Tensor*, Backend*> where;  // every node of the graph
    int n_copies = 0;
};

bool is_view_op(Op op);
inline Tensor* root_of(Tensor* t) {
    return t->view_src ? t->view_src : t;
}

// Assigns the nodes of g to backends (priority order, host last), splits the graph and creates the
// copy tensors (without memory) in copies_ctx. Throws Error when an op cannot run anywhere, or an
// in-place op cannot run where its memory lives.
Plan make_plan(Graph& g, const std::vector<Backend*>& backends, Context& copies_ctx);

// The backend whose memory holds t's bytes under plan (host for host memory and inputs).
Backend* memory_owner(const Tensor* t, const Plan& plan, const std::vector<Backend*>& backends);

}  // namespace ggml::sched
