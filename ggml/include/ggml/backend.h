// Backends (CPU, CUDA) behind one interface, and the graph allocator.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ggml/ggml.h"

namespace ggml {

class Backend;

// A point in a backend's queue of work. Backends that run asynchronously (CUDA) record one after a
// piece of work; another backend waits for it before it reads that work's results.
class Event {
public:
    virtual ~Event() = default;
    // Blocks the calling thread until the work before the event is done.
    virtual void synchronize() = 0;
};

// A block of memory owned by a backend. Tensors placed in it point into [base, base + size).
struct Buffer {
    Backend* backend = nullptr;
    void* base = nullptr;
    size_t size = 0;
    virtual ~Buffer() = default;
};

// A sleeping server (--sleep-idle-seconds): gives a host buffer's whole pages back to the OS, its contents
// reading as zeros afterwards; a device buffer is left alone. Returns the bytes given back.
size_t release_pages(Buffer& b);

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // Whether buffers of this backend are addressable from the CPU.
    virtual bool is_host() const = 0;
    virtual std::unique_ptr<Buffer> alloc_buffer(size_t size) = 0;
    virtual bool supports_op(const Tensor* t) const = 0;
    // Whether node may write its result over its first source (same shape and layout) when it is that
    // source's last reader; the graph allocator then gives both the same memory.
    virtual bool can_overwrite_src0(const Tensor* node) const {
        (void)node;
        return false;
    }
    // Computes every node of g. All tensors must live in memory this backend can address.
    virtual void graph_compute(Graph& g) = 0;
    // Copies between host memory and a tensor's data (which may live on a device).
    virtual void tensor_set(Tensor* t, const void* src, size_t offset, size_t size) = 0;
    virtual void tensor_get(const Tensor* t, void* dst, size_t offset, size_t size) = 0;
    // Waits until all submitted work is done.
    virtual void synchronize() {}
    // An event after the work submitted so far; nullptr from backends whose calls return only when
    // their work is done (the CPU), for which there is nothing to wait for.
    virtual std::unique_ptr<Event> record_event() { return nullptr; }
    // Makes work submitted to this backend from now on wait for ev (on the device where it can).
    virtual void wait_event(Event& ev) { ev.synchronize(); }
};

// The CPU backend; n_threads can be changed between computes (decode vs batch threads).
class CpuBackend : public Backend {
public:
    virtual void set_n_threads(int n) = 0;
    virtual int n_threads() const = 0;
};

// Where and how the CPU backend's threads run (llama-server's -C/--cpu-mask, --cpu-range, --cpu-strict,
// --poll, --numa). Each thread applies them to itself when it starts; the calling thread (thread 0 of
// every computation) when it first computes.
struct CpuThreadOptions {
    std::vector<int> cpus;  // CPUs the threads may run on, in placement order; empty: any
    bool strict = false;    // thread i runs on cpus[i % size] only (else on any of cpus)
    int poll = 50;          // 0..100: how long an idle thread polls for work before it sleeps (0: at once)
};
std::unique_ptr<CpuBackend> make_cpu_backend(int n_threads, const CpuThreadOptions& options = {});

// ---- CUDA ----------------------------------------------------------------------------------------
// Available in every build: without CUDA support (GGML_CUDA=OFF) there are no devices and
// make_cuda_backend throws.
struct CudaOptions {
    // Capture decode-sized graphs (at most 8 tokens) as CUDA graphs and replay them while the graph is
    // unchanged.
    bool cuda_graphs = true;
    // Prompt batches (more than 8 tokens) through cuBLAS on f16-dequantized weights: faster, but a
    // token's result then depends on the batch it is in. Off: every batch size computes each output
    // exactly as a single-token decode does (and as the CPU's reference arithmetic does).
    bool cublas_prefill = false;
};
// Number of usable CUDA devices; 0 without CUDA support, driver or device.
int cuda_device_count();
// One line: the devices found ("CUDA0: NVIDIA H100 80GB HBM3, 79 GiB, sm_90"), or why there are none.
std::string cuda_status();
// A backend on device `device` (0-based). Throws Error with the reason when this build has no CUDA
// support, no device is usable, or the index is out of range.
std::unique_ptr<Backend> make_cuda_backend(int device, const CudaOptions& options = {});

// ---- tensors in backend memory ---------------------------------------------------------------------
// Places tensors (which must have no memory yet) in one new buffer of `backend`, each at an aligned
// offset, and returns that buffer: keep it alive as long as the tensors. Weights and KV caches are put
// on a device this way, then filled with tensor_set.
std::unique_ptr<Buffer> alloc_tensors(Backend& backend, std::span<Tensor* const> tensors);
// Copies bytes between host memory and a tensor wherever it lives (through its buffer's backend;
// plain memory without a buffer is host memory). Throws Error if the range exceeds the tensor.
void tensor_set(Tensor* t, const void* src, size_t offset, size_t size);
void tensor_get(const Tensor* t, void* dst, size_t offset, size_t size);

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

// ---- the backend scheduler -------------------------------------------------------------------------
// Runs one graph on several backends (partial offload). Backends come in priority order and the last
// must be the host (CPU) backend. Each node runs where its weights live (a source that is a leaf in a
// backend's buffer, or a host weight flagged kFlagParam; the highest-priority such backend wins);
// otherwise where the producer of its first computed source runs; the host when neither applies. A
// backend that lacks the op hands it to the next one in priority order (finally the host). In-place
// ops (set_rows) run where the memory they write lives. Consecutive nodes on one backend form a split;
// a split's sources that live elsewhere are copied into its backend before it runs, after the event of
// the split that produced them.
//
// Inputs (leaves without memory: tokens, positions, masks) are placed on the host, so the caller fills
// them with memcpy or tensor_set after allocate(); results are read with tensor_get.
class BackendScheduler {
public:
    explicit BackendScheduler(std::vector<Backend*> backends);
    ~BackendScheduler();
    BackendScheduler(const BackendScheduler&) = delete;
    BackendScheduler& operator=(const BackendScheduler&) = delete;

    // Assigns and splits g and gives memory to its intermediates and inputs (reused by lifetime within
    // each backend). A graph is allocated once; allocate a new graph for each evaluation.
    void allocate(Graph& g);
    // Runs the splits of the graph last allocated; returns when its results are ready.
    void compute(Graph& g);

    // The plan of the last allocate(): where a node runs (nullptr for tensors not in the graph), how
    // many splits and how many tensors are copied between backends per compute.
    Backend* backend_of(const Tensor* node) const;
    int n_splits() const;
    int n_copies() const;
    // Bytes of intermediate memory held on a backend.
    size_t buffer_size(const Backend* backend) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ggml
