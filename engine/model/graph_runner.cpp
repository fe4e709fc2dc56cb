#include "engine/model/graph_runner.h"

namespace engine {

GraphRunner::GraphRunner(ggml::CpuBackend& cpu, ggml::Backend* offload) : cpu_(cpu) {
    if (offload)
        sched_ = std::make_unique<ggml::BackendScheduler>(std::vector<ggml::Backend*>{offload, &cpu});
    else
        galloc_ = std::make_unique<ggml::GraphAllocator>(cpu);
}

GraphRunner::~GraphRunner() = default;

void GraphRunner::allocate(ggml::Graph& g) {
    if (sched_)
        sched_->allocate(g);
    else
        galloc_->allocate(g);
}

void GraphRunner::compute(ggml::Graph& g, int n_threads) {
    cpu_.set_n_threads(n_threads);
    if (sched_)
        sched_->compute(g);
    else
        cpu_.graph_compute(g);
}

}  // namespace engine
