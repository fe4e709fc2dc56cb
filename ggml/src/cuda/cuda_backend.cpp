// The CUDA backend: device buffers, host<->device copies through pinned staging, graphs enqueued on the
// backend's own stream (captured as CUDA graphs when decode-sized), events, and the device registry.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>

#include "device_probe.h"
#include "dispatch.h"
#include "error.h"
#include "exec_context.h"
#include "ggml/backend.h"
#include "graph_cache.h"
#include "ops.h"
#include "staging.h"

namespace ggml {

namespace {

using cuda::ExecContext;

struct DeviceGuard {
    explicit DeviceGuard(int device) { CUDA_CHECK(cudaSetDevice(device)); }
};

struct CudaBuffer : Buffer {
    int device = 0;
    ~CudaBuffer() override {
        if (base && cudaSetDevice(device) == cudaSuccess) cudaFree(base);
    }
};

class CudaEvent final : public Event {
  public:
    CudaEvent(int device, cudaEvent_t ev) : device_(device), ev_(ev) {}
    ~CudaEvent() override {
        if (cudaSetDevice(device_) == cudaSuccess) cudaEventDestroy(ev_);
    }
    void synchronize() override {
        DeviceGuard g(device_);
        CUDA_CHECK(cudaEventSynchronize(ev_));
    }
    cudaEvent_t get() const { return ev_; }

  private:
    int device_;
    cudaEvent_t ev_;
};

std::string gib(size_t bytes) {
    return std::to_string((bytes + (size_t(1) << 29)) >> 30) + " GiB";
}

const char* kernel_error_message(int code) {
    switch (code) {
        case cuda::kErrGetRowsId:
            return "get_rows: row id out of range";
        case cuda::kErrSetRowsId:
            return "set_rows: row id out of range";
        case cuda::kErrMulMatIdId:
            return "mul_mat_id: expert id out of range";
        default:
            return "unknown kernel error";
    }
}

// Graphs whose mat-vecs have few columns (decode steps) are worth capturing; prompt batches are not.
bool decode_sized(const std::vector<Tensor*>& nodes) {
    for (const Tensor* n : nodes)
        if ((n->op == Op::MulMat && n->src[1]->ne[1] > cuda::kMaxVecColumns) ||
            (n->op == Op::MulMatId && n->src[2]->ne[1] > cuda::kMaxVecColumns))
            return false;
    return true;
}

class CudaBackendImpl final : public Backend {
  public:
    CudaBackendImpl(int device, const CudaOptions& options) : device_(device), options_(options) {
        DeviceGuard g(device_);
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        CUDA_CHECK(cudaHostAlloc(&error_host_, sizeof(int), cudaHostAllocMapped));
        *error_host_ = cuda::kErrNone;
        CUDA_CHECK(cudaHostGetDevicePointer(&error_dev_, error_host_, 0));
        if (options_.cublas_prefill) {
            CUBLAS_CHECK(cublasCreate(&cublas_));
            CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
        }
    }

    ~CudaBackendImpl() override {
        if (cudaSetDevice(device_) != cudaSuccess) return;
        cudaStreamSynchronize(stream_);
        graphs_.reset();
        staging_.reset();
        if (cublas_) cublasDestroy(cublas_);
        if (scratch_) cudaFree(scratch_);
        if (error_host_) cudaFreeHost(error_host_);
        cudaStreamDestroy(stream_);
    }

    std::string name() const override { return "CUDA" + std::to_string(device_); }
    bool is_host() const override { return false; }

    std::unique_ptr<Buffer> alloc_buffer(size_t size) override {
        DeviceGuard g(device_);
        auto b = std::make_unique<CudaBuffer>();
        b->backend = this;
        b->device = device_;
        b->size = size;
        const cudaError_t err = cudaMalloc(&b->base, std::max<size_t>(size, 256));
        if (err != cudaSuccess) {
            cudaGetLastError();
            b->base = nullptr;
            size_t free = 0, total = 0;
            cudaMemGetInfo(&free, &total);
            throw Error(name() + ": cannot allocate " + std::to_string(size) + " bytes of device memory (" +
                        gib(free) + " free of " + gib(total) + "): " + cudaGetErrorString(err));
        }
        return b;
    }

    bool supports_op(const Tensor* t) const override { return cuda::op_supported(t); }

    void graph_compute(Graph& g) override {
        DeviceGuard guard(device_);
        nodes_.clear();
        size_t scratch = 0;
        for (Tensor* n : g.nodes) {
            if (cuda::is_view_op(n->op)) continue;
            if (!cuda::op_supported(n))
                throw Error(name() + ": unsupported op " + op_name(n->op) + " '" + n->name + "' (type " +
                            type_name(n->type) + ")");
            require_device_memory(n);
            nodes_.push_back(n);
            scratch = std::max(scratch, cuda::op_scratch(n, cublas_ != nullptr));
        }
        reserve_scratch(scratch);  // before any capture: nothing is allocated while capturing
        ExecContext ctx{stream_, (char*)scratch_, scratch_size_, error_dev_, cublas_};
        if (options_.cuda_graphs && !graphs_failed_ && decode_sized(nodes_)) {
            cuda::GraphKey key = cuda::graph_key(nodes_, scratch_);
            if (cudaGraphExec_t exec = graphs_->find(key)) {
                CUDA_CHECK(cudaGraphLaunch(exec, stream_));
                return;
            }
            if (graphs_->repeats(key) && capture_and_launch(ctx, std::move(key))) return;
        }
        for (Tensor* n : nodes_) cuda::run_op(ctx, n);
    }

    void tensor_set(Tensor* t, const void* src, size_t offset, size_t size) override {
        DeviceGuard g(device_);
        staging_->upload((char*)t->data + offset, src, size, stream_);
    }

    void tensor_get(const Tensor* t, void* dst, size_t offset, size_t size) override {
        DeviceGuard g(device_);
        staging_->download(dst, (const char*)t->data + offset, size, stream_);
        check_kernel_errors();
    }

    void synchronize() override {
        DeviceGuard g(device_);
        CUDA_CHECK(cudaStreamSynchronize(stream_));
        check_kernel_errors();
    }

    std::unique_ptr<Event> record_event() override {
        DeviceGuard g(device_);
        cudaEvent_t ev;
        CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
        auto e = std::make_unique<CudaEvent>(device_, ev);
        CUDA_CHECK(cudaEventRecord(ev, stream_));
        return e;
    }

    void wait_event(Event& ev) override {
        if (auto* ce = dynamic_cast<CudaEvent*>(&ev)) {
            DeviceGuard g(device_);
            CUDA_CHECK(cudaStreamWaitEvent(stream_, ce->get(), 0));
        } else {
            ev.synchronize();
        }
    }

  private:
    // Every tensor a kernel touches must be in this device's memory (else the kernel would fault and
    // poison the whole CUDA context).
    void require_device_memory(const Tensor* n) const {
        auto check = [&](const Tensor* t) {
            const Tensor* r = t->view_src ? t->view_src : t;
            const auto* b = dynamic_cast<const CudaBuffer*>(r->buffer);
            if (!b || b->device != device_)
                throw Error(name() + ": tensor '" + std::string(t->name) + "' used by " + op_name(n->op) +
                            " '" + n->name + "' is not in this device's memory");
        };
        check(n);
        for (const Tensor* s : n->src)
            if (s) check(s);
    }

    void reserve_scratch(size_t need) {
        if (need <= scratch_size_) return;
        CUDA_CHECK(cudaStreamSynchronize(stream_));  // kernels in flight may still use the old scratch
        if (scratch_) CUDA_CHECK(cudaFree(scratch_));
        scratch_ = nullptr;
        scratch_size_ = 0;
        const size_t size = need + need / 8;
        const cudaError_t err = cudaMalloc(&scratch_, size);
        if (err != cudaSuccess) {
            cudaGetLastError();
            scratch_ = nullptr;
            throw Error(name() + ": cannot allocate " + std::to_string(size) +
                        " bytes of scratch: " + cudaGetErrorString(err));
        }
        scratch_size_ = size;
    }

    // Captures the nodes as a CUDA graph and launches it. On any capture failure CUDA graphs are turned
    // off for this backend and the caller enqueues the nodes directly.
    bool capture_and_launch(ExecContext& ctx, cuda::GraphKey key) {
        cudaGraph_t graph = nullptr;
        CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
        bool enqueued = true;
        try {
            for (Tensor* n : nodes_) cuda::run_op(ctx, n);
        } catch (const Error&) {
            enqueued = false;
        }
        const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
        cudaGraphExec_t exec = nullptr;
        const bool ok =
            enqueued && end == cudaSuccess && graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
        if (graph) cudaGraphDestroy(graph);
        if (!ok) {
            cudaGetLastError();  // clear the capture's error state
            graphs_failed_ = true;
            return false;
        }
        graphs_->insert(std::move(key), exec);
        CUDA_CHECK(cudaGraphLaunch(exec, stream_));
        return true;
    }

    void check_kernel_errors() {
        const int code = *(volatile int*)error_host_;
        if (code == cuda::kErrNone) return;
        *(volatile int*)error_host_ = cuda::kErrNone;
        throw Error(name() + ": " + kernel_error_message(code));
    }

    int device_;
    CudaOptions options_;
    cudaStream_t stream_ = nullptr;
    cublasHandle_t cublas_ = nullptr;
    void* scratch_ = nullptr;
    size_t scratch_size_ = 0;
    int* error_host_ = nullptr;  // host-mapped: kernels write it, the host reads it after synchronizing
    int* error_dev_ = nullptr;
    std::unique_ptr<cuda::Staging> staging_ = std::make_unique<cuda::Staging>();
    std::unique_ptr<cuda::GraphCache> graphs_ = std::make_unique<cuda::GraphCache>();
    bool graphs_failed_ = false;
    std::vector<Tensor*> nodes_;
};

cudaError_t device_count(int* n) {
    *n = 0;
    const cudaError_t err = cudaGetDeviceCount(n);
    if (err != cudaSuccess) {
        cudaGetLastError();
        *n = 0;
    }
    return err;
}

}  // namespace

int cuda_device_count() {
    int n;
    device_count(&n);
    return n;
}

std::string cuda_status() {
    int n;
    const cudaError_t err = device_count(&n);
    if (err != cudaSuccess) return std::string("no usable CUDA device (") + cudaGetErrorString(err) + ")";
    if (n == 0) return "no CUDA device found";
    std::string s;
    for (int i = 0; i < n; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        s += (i ? "; " : "") + std::string("CUDA") + std::to_string(i) + ": " + prop.name + ", " +
             gib(prop.totalGlobalMem) + ", sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    }
    return s;
}

std::unique_ptr<Backend> make_cuda_backend(int device, const CudaOptions& options) {
    int n;
    device_count(&n);
    if (n == 0) throw Error("cannot use a CUDA device: " + cuda_status());
    if (device < 0 || device >= n)
        throw Error("CUDA device " + std::to_string(device) + " does not exist: " + std::to_string(n) +
                    " device(s) found (" + cuda_status() + ")");
    DeviceGuard g(device);
    const cudaError_t probe = cuda::probe_current_device();
    if (probe != cudaSuccess) {
        cudaGetLastError();
        throw Error("cannot run on CUDA device " + std::to_string(device) + " (" + cuda_status() +
                    "): " + cudaGetErrorString(probe) +
                    "; this build's kernels are for CUDA architectures " GGML_CUDA_ARCHS
                    " (set CMAKE_CUDA_ARCHITECTURES to include this device's)");
    }
    return std::make_unique<CudaBackendImpl>(device, options);
}

}  // namespace ggml
