// The CPU backend: host buffers and graph execution on the persistent thread pool.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "ggml/backend.h"
#include "ops.h"
#include "threadpool.h"

namespace ggml {

namespace {

struct HostBuffer : Buffer {
    ~HostBuffer() override { std::free(base); }
};

bool is_view_op(Op op) {
    return op == Op::Reshape || op == Op::View || op == Op::Permute || op == Op::Transpose;
}

class CpuBackendImpl final : public CpuBackend {
  public:
    explicit CpuBackendImpl(int n_threads) : pool_(n_threads), n_threads_(n_threads < 1 ? 1 : n_threads) {}

    std::string name() const override { return "CPU"; }
    bool is_host() const override { return true; }

    std::unique_ptr<Buffer> alloc_buffer(size_t size) override {
        auto b = std::make_unique<HostBuffer>();
        b->backend = this;
        b->size = size;
        const size_t alloc = ((size ? size : 1) + 63) & ~size_t(63);
        b->base = std::aligned_alloc(64, alloc);
        if (!b->base) throw Error("CPU backend: out of memory allocating " + std::to_string(size) + " bytes");
        return b;
    }

    bool supports_op(const Tensor* t) const override { return cpu::op_supported(t); }

    void set_n_threads(int n) override { n_threads_ = std::max(1, std::min(n, pool_.max_threads())); }
    int n_threads() const override { return n_threads_; }

    void graph_compute(Graph& g) override {
        // Plan: drop no-op views, size one scratch buffer for the largest op.
        nodes_.clear();
        size_t work = 0;
        double macs = 0;  // multiply-adds of the matrix products: the bulk of the graph's work
        for (Tensor* t : g.nodes) {
            if (is_view_op(t->op)) continue;
            if (!cpu::op_supported(t))
                throw Error(std::string("CPU backend: unsupported op ") + op_name(t->op));
            nodes_.push_back(t);
            work = std::max(work, cpu::op_work_size(t, n_threads_));
            if (t->op == Op::MulMat || t->op == Op::MulMatT || t->op == Op::FlashAttn)
                macs += (double)t->nelements() * (double)t->src[0]->ne[t->op == Op::MulMatT ? 1 : 0];
        }
        // A thread must have enough work to pay for the barriers between ops (tiny models decode faster
        // on one thread than on several).
        constexpr double kMinMacsPerThread = 4e6;
        const int nth_used = std::max(1, std::min(n_threads_, (int)(macs / kMinMacsPerThread)));
        if (work > work_.size()) work_.resize(work + 4096);
        if (counters_size_ < nodes_.size()) {
            counters_ = std::make_unique<std::atomic<int64_t>[]>(nodes_.size());
            counters_size_ = nodes_.size();
        }
        for (size_t i = 0; i < nodes_.size(); ++i) counters_[i].store(0, std::memory_order_relaxed);
        const int nth = nth_used;
        pool_.run(nth, [&](int ith, int n) {
            cpu::ComputeParams p;
            p.ith = ith;
            p.nth = n;
            p.wdata = work_.data();
            p.wsize = work_.size();
            p.pool = &pool_;
            for (size_t i = 0; i < nodes_.size(); ++i) {
                p.counter = &counters_[i];
                cpu::compute_op(p, nodes_[i]);
                p.barrier();
            }
        });
    }

    void tensor_set(Tensor* t, const void* src, size_t offset, size_t size) override {
        std::memcpy((char*)t->data + offset, src, size);
    }
    void tensor_get(const Tensor* t, void* dst, size_t offset, size_t size) override {
        std::memcpy(dst, (const char*)t->data + offset, size);
    }

  private:
    cpu::ThreadPool pool_;
    int n_threads_;
    std::vector<Tensor*> nodes_;
    std::vector<char> work_;
    std::unique_ptr<std::atomic<int64_t>[]> counters_;  // one work counter per node
    size_t counters_size_ = 0;
};

}  // namespace

std::unique_ptr<CpuBackend> make_cpu_backend(int n_threads) {
    return std::make_unique<CpuBackendImpl>(n_threads);
}

}  // namespace ggml
