// Runs the engine's graphs (forward pass, K-shift): on the CPU backend alone with the graph allocator,
// or, when the model has layers on an offload backend, through the backend scheduler, which assigns
// each op to where its weights or cache live and copies inputs between backends.
#pragma once

#include <memory>

#include "ggml/backend.h"
#include "ggml/ggml.h"

namespace engine {

class GraphRunner {
  public:
    // offload: the model's offload backend, or nullptr for the CPU alone.
    GraphRunner(ggml::CpuBackend& cpu, ggml::Backend* offload);
    ~GraphRunner();

    // Gives memory to the graph's intermediates and inputs. Inputs are host memory afterwards: fill
    // them with memcpy. Read results with ggml::tensor_get (they may live on a device).
    void allocate(ggml::Graph& g);
    // Computes the graph last allocated, the CPU's part on n_threads; returns when results are ready.
    void compute(ggml::Graph& g, int n_threads);
    bool scheduled() const { return sched_ != nullptr; }

  private:
    ggml::CpuBackend& cpu_;
    std::unique_ptr<ggml::GraphAllocator> galloc_;   // CPU alone
    std::unique_ptr<ggml::BackendScheduler> sched_;  // CPU + offload backend
};

}  // namespace engine
