// CUDA graphs for decode steps. A graph is keyed by everything its kernel launches depend on (ops,
// types, shapes, strides, parameters, data addresses, the scratch address). When a key comes a second
// time among the last few seen (a step may run several graphs, one per split) it is captured once, and
// replayed whenever it comes again. Values inside tensors (tokens, positions, masks) may change between
// replays; anything else makes a new key.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <list>
#include <utility>
#include <vector>

#include "ggml/ggml.h"

namespace ggml::cuda {

using GraphKey = std::vector<uint64_t>;

GraphKey graph_key(const std::vector<Tensor*>& nodes, const void* scratch);

class GraphCache {
  public:
    explicit GraphCache(size_t capacity = 8) : capacity_(capacity) {}
    ~GraphCache();
    GraphCache(const GraphCache&) = delete;
    GraphCache& operator=(const GraphCache&) = delete;

    // The captured graph for key, or nullptr.
    cudaGraphExec_t find(const GraphKey& key);
    // Whether key was among the last few keys seen (the second sighting triggers a capture).
    bool repeats(const GraphKey& key);
    // Keeps exec for key, evicting the least recently used graph beyond the capacity.
    void insert(GraphKey key, cudaGraphExec_t exec);
    size_t size() const { return graphs_.size(); }

  private:
    size_t capacity_;
    std::list<std::pair<GraphKey, cudaGraphExec_t>> graphs_;  // most recently used first
    std::list<GraphKey> seen_;  // most recent first, at most capacity_
};

}  // namespace ggml::cuda
