// Backends (CPU, CUDA) behind one interface, and the graph allocator.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ggml/ggml.h"

namespace ggml {

class Backend;

// A block of memory owned by a backend. Tensors placed in it point into [base, base + size).
struct Buffer {
    Backend* backend = nullptr;
    void* base = nullptr;
    size_t size = 0;
    virtual ~Buffer() = default;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // Whether buffers of this backend are addressable from the CPU.
    virtual bool is_host() const = 0;
    virtual std::unique_ptr<Buffer> alloc_buffer(size_t size) = 0;
    virtual bool supports_op(const Tensor* t) const = 0;
    // Computes every node of g. All tensors must live in memory this backend can address.
    virtual void graph_compute(Graph& g) = 0;
    // Copies between host memory and a tensor's data (which may live on a device).
    virtual void tensor_set(Tensor* t, const void* src, size_t offset, size_t size) = 0;
    virtual void tensor_get(const Tensor* t, void* dst, size_t offset, size_t size) = 0;
    virtual void synchronize() {}
};

// The CPU backend; n_threads can be changed between computes (decode vs batch threads).
class CpuBackend : public Backend {
public:
    virtual void set_n_threads(int n) = 0;
    virtual int n_threads() const = 0;
};
std::unique_ptr<CpuBackend> make_cpu_backend(int n_threads);

// Assigns memory to every tensor of a graph that has none (op results and inputs), reusing the memory
// of results whose last reader has run. Views share their source's memory. Tensors flagged
// kFlagOutput or kFlagInput are never reused within the graph.
class GraphAllocator {
public:
    explicit GraphAllocator(Backend& backend) : backend_(backend) {}
    // Plans offsets, grows the buffer if needed and sets data pointers. Returns the bytes used.
    size_t allocate(Graph& g);
    size_t buffer_size() const { return buffer_ ? buffer_->size : 0; }

private:
    Backend& backend_;
    std::unique_ptr<Buffer> buffer_;
};

}  // namespace ggml
