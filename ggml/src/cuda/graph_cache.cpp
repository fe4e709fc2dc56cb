#include "graph_cache.h"

namespace ggml::cuda {

namespace {

void push_tensor(GraphKey& k, const Tensor* t) {
    k.push_back((uint64_t)(uintptr_t)t->data);
    k.push_back((uint64_t)t->type);
    for (int i = 0; i < kMaxDims; ++i) {
        k.push_back((uint64_t)t->ne[i]);
        k.push_back((uint64_t)t->nb[i]);
    }
}

}  // namespace

GraphKey graph_key(const std::vector<Tensor*>& nodes, const void* scratch) {
    GraphKey k;
    k.reserve(nodes.size() * 64);
    k.push_back((uint64_t)(uintptr_t)scratch);
    for (const Tensor* n : nodes) {
        k.push_back((uint64_t)n->op);
        push_tensor(k, n);
        for (int i = 0; i < kMaxOpParams; ++i) k.push_back((uint32_t)n->op_params[i]);
        for (const Tensor* s : n->src) {
            if (s)
                push_tensor(k, s);
            else
                k.push_back(0);
        }
    }
    return k;
}

GraphCache::~GraphCache() {
    for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);
}

cudaGraphExec_t GraphCache::find(const GraphKey& key) {
    for (auto it = graphs_.begin(); it != graphs_.end(); ++it)
        if (it->first == key) {
            graphs_.splice(graphs_.begin(), graphs_, it);
            return graphs_.front().second;
        }
    return nullptr;
}

bool GraphCache::repeats(const GraphKey& key) {
    for (auto it = seen_.begin(); it != seen_.end(); ++it)
        if (*it == key) {
            seen_.erase(it);
            return true;
        }
    seen_.push_front(key);
    if (seen_.size() > capacity_) seen_.pop_back();
    return false;
}

void GraphCache::insert(GraphKey key, cudaGraphExec_t exec) {
    graphs_.emplace_front(std::move(key), exec);
    while (graphs_.size() > capacity_) {
        cudaGraphExecDestroy(graphs_.back().second);
        graphs_.pop_back();
    }
}

}  // namespace ggml::cuda
