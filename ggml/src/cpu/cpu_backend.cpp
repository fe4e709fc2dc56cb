// The CPU backend: host buffers and graph execution on the persistent thread pool.
#include <immintrin.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "ggml/backend.h"
#include "op_profile.h"
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
    CpuBackendImpl(int n_threads, const CpuThreadOptions& options)
        : pool_(n_threads, options), n_threads_(n_threads < 1 ? 1 : n_threads) {}

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
    // soft_max reads each element of a row before it writes the same element (scale_mask_max_row, then
    // exp_row and the normalisation in place), so its output can take its input's memory: without it the
    // attention scores of a 512-token batch are live twice.
    bool can_overwrite_src0(const Tensor* node) const override { return node->op == Op::SoftMax; }

    void set_n_threads(int n) override { n_threads_ = std::max(1, std::min(n, pool_.max_threads())); }
    int n_threads() const override { return n_threads_; }

    void graph_compute(Graph& g) override {
        // Plan: drop no-op views, one step per phase of each op, size one scratch buffer for the
        // largest op.
        steps_.clear();
        size_t work = 0;
        double macs = 0;  // multiply-adds of the matrix products: the bulk of the graph's work
        for (Tensor* t : g.nodes) {
            if (is_view_op(t->op)) continue;
            if (!cpu::op_supported(t))
                throw Error(std::string("CPU backend: unsupported op ") + op_name(t->op));
            const int phases = cpu::op_phases(t);
            for (int ph = 0; ph < phases; ++ph) steps_.push_back({t, ph});
            work = std::max(work, cpu::op_work_size(t, n_threads_));
            if (t->op == Op::MulMat || t->op == Op::MulMatT || t->op == Op::FlashAttn ||
                t->op == Op::MulMatId)
                macs += (double)t->nelements() * (double)t->src[0]->ne[t->op == Op::MulMatT ? 1 : 0];
        }
        // A thread must have enough work to pay for the synchronization between ops (tiny models decode
        // faster on one thread than on several).
        constexpr double kMinMacsPerThread = 4e6;
        const int nth = std::max(1, std::min(n_threads_, (int)(macs / kMinMacsPerThread)));
        if (work > work_.size()) work_.resize(work + 4096);
        if (sync_size_ < steps_.size()) {
            sync_ = std::make_unique<StepSync[]>(steps_.size());
            sync_size_ = steps_.size();
        }
        for (size_t i = 0; i < steps_.size(); ++i) {
            sync_[i].claimed.store(0, std::memory_order_relaxed);
            sync_[i].done.store(0, std::memory_order_relaxed);
            sync_[i].work.store(0, std::memory_order_relaxed);
        }
        const bool profile = cpu::op_profile_enabled();
        const int64_t start_ns = profile ? cpu::op_profile_now() : 0;
        // Each step is nth shares claimed by whichever thread comes first, and a step starts once every
        // share of the previous one is done. No thread waits for another to arrive: a thread that the OS
        // has descheduled (a loaded machine) holds up the others only while it holds an unfinished share,
        // and catches up by skipping the steps already taken. Outputs do not depend on which thread
        // computes a share.
        pool_.run(nth, [&](int, int) {
            cpu::ComputeParams p;
            p.nth = nth;
            p.wdata = work_.data();
            p.wsize = work_.size();
            for (size_t i = 0; i < steps_.size(); ++i) {
                StepSync& st = sync_[i];
                if (i > 0) wait_done(sync_[i - 1], nth);
                if (st.claimed.load(std::memory_order_relaxed) >= nth) continue;
                for (int c = st.claimed.fetch_add(1, std::memory_order_acq_rel); c < nth;
                     c = st.claimed.fetch_add(1, std::memory_order_acq_rel)) {
                    p.ith = c;
                    p.phase = steps_[i].phase;
                    p.counter = &st.work;
                    cpu::compute_op(p, steps_[i].node);
                    if (st.done.fetch_add(1, std::memory_order_release) + 1 == nth && profile)
                        st.end_ns = cpu::op_profile_now();
                }
            }
        });
        if (profile) {
            for (size_t i = 0; i < steps_.size(); ++i)
                cpu::op_profile_add(cpu::op_profile_key(steps_[i].node),
                                    sync_[i].end_ns - (i ? sync_[i - 1].end_ns : start_ns));
        }
    }

    void tensor_set(Tensor* t, const void* src, size_t offset, size_t size) override {
        std::memcpy((char*)t->data + offset, src, size);
    }
    void tensor_get(const Tensor* t, void* dst, size_t offset, size_t size) override {
        std::memcpy(dst, (const char*)t->data + offset, size);
    }

  private:
    struct Step {
        Tensor* node;
        int phase;
    };
    // A step's counters, on their own cache line.
    struct alignas(64) StepSync {
        std::atomic<int> claimed{0};   // shares handed out
        std::atomic<int> done{0};      // shares finished
        std::atomic<int64_t> work{0};  // the op's own work counter (ComputeParams::counter)
        int64_t end_ns = 0;            // GGML_CPU_PROFILE: when its last share finished
    };

    // Spins until all n shares of a step are done; yields the CPU while a share's thread does not
    // progress (it may be waiting for this CPU).
    static void wait_done(const StepSync& st, int n) {
        for (int spin = 0; st.done.load(std::memory_order_acquire) < n; ++spin) {
            if (spin < kSpinBeforeYield)
                _mm_pause();
            else
                std::this_thread::yield();
        }
    }
    static constexpr int kSpinBeforeYield = 1 << 14;

    cpu::ThreadPool pool_;
    int n_threads_;
    std::vector<Step> steps_;
    std::vector<char> work_;
    std::unique_ptr<StepSync[]> sync_;
    size_t sync_size_ = 0;
};

}  // namespace

std::unique_ptr<CpuBackend> make_cpu_backend(int n_threads, const CpuThreadOptions& options) {
    return std::make_unique<CpuBackendImpl>(n_threads, options);
}

}  // namespace ggml
