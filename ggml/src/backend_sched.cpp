// The backend scheduler: plan (assignment, splits, copies), memory by lifetime per backend, execution.
#include "backend_sched.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "offset_planner.h"

namespace ggml {

namespace sched {

bool is_view_op(Op op) {
    return op == Op::Reshape || op == Op::View || op == Op::Permute || op == Op::Transpose;
}

namespace {

int priority(const Backend* b, const std::vector<Backend*>& backends) {
    for (size_t i = 0; i < backends.size(); ++i)
        if (backends[i] == b) return (int)i;
    throw Error("backend scheduler: a tensor lives in memory of backend '" + b->name() +
                "', which is not one of the scheduler's backends");
}

// Leaves whose memory says where their readers run: anything in a backend buffer (device weights, KV
// caches) and host weights. Inputs get their memory from the scheduler and pin nothing.
bool is_placed_leaf(const Tensor* r) {
    return r->op == Op::None && (r->buffer || (r->flags & kFlagParam));
}

// Where node n runs, before falling back for unsupported ops.
Backend* preferred_backend(Tensor* n, const Plan& plan, const std::vector<Backend*>& backends) {
    Backend* best = nullptr;
    for (Tensor* s : n->src) {
        if (!s || !is_placed_leaf(root_of(s))) continue;
        Backend* b = memory_owner(s, plan, backends);
        if (!best || priority(b, backends) < priority(best, backends)) best = b;
    }
    if (best) return best;
    for (Tensor* s : n->src) {  // the producer of the first computed source
        Tensor* r = s ? root_of(s) : nullptr;
        if (r && r->op != Op::None) return plan.where.at(r);
    }
    return backends.back();
}

}  // namespace

Backend* memory_owner(const Tensor* t, const Plan& plan, const std::vector<Backend*>& backends) {
    const Tensor* r = t->view_src ? t->view_src : t;
    if (r->buffer) {
        priority(r->buffer->backend, backends);  // throws for a backend the scheduler does not know
        return r->buffer->backend;
    }
    if (r->op == Op::None || r->data) return backends.back();  // host memory, or an input placed on the host
    return plan.where.at(r);                                   // computed where it lives
}

Plan make_plan(Graph& g, const std::vector<Backend*>& backends, Context& copies_ctx) {
    Plan plan;
    // 1. Assignment, in graph order (producers first).
    for (Tensor* n : g.nodes) {
        if (is_view_op(n->op)) {
            plan.where[n] = memory_owner(n, plan, backends);
            continue;
        }
        // In-place ops (set_rows) and nodes given memory by the caller run where that memory is.
        const bool fixed = n->view_src || n->data;
        Backend* b = fixed ? memory_owner(n, plan, backends) : preferred_backend(n, plan, backends);
        if (!b->supports_op(n)) {
            if (fixed)
                throw Error(std::string("backend scheduler: ") + op_name(n->op) + " '" + n->name +
                            "' writes memory of backend '" + b->name() + "', which cannot compute it");
            Backend* fallback = nullptr;
            for (size_t i = (size_t)priority(b, backends) + 1; i < backends.size() && !fallback; ++i)
                if (backends[i]->supports_op(n)) fallback = backends[i];
            if (!fallback)
                throw Error(std::string("backend scheduler: no backend can compute ") + op_name(n->op) +
                            " '" + n->name + "'");
            b = fallback;
        }
        plan.where[n] = b;
    }

    // 2. Splits: runs of consecutive computed nodes on one backend.
    for (Tensor* n : g.nodes) {
        if (is_view_op(n->op)) continue;
        Backend* b = plan.where[n];
        if (plan.splits.empty() || plan.splits.back().backend != b) plan.splits.emplace_back().backend = b;
        plan.splits.back().graph.nodes.push_back(n);
    }

    // 3. Copies: a source whose bytes live on another backend is copied once into each backend that
    // reads it, before the first split there that needs it (tensors are written once, so the copy
    // stays valid for later splits).
    std::map<std::pair<const Tensor*, const Backend*>, Tensor*> copy_of;
    for (Split& sp : plan.splits) {
        for (Tensor* n : sp.graph.nodes) {
            for (int j = 0; j < kMaxSrc; ++j) {
                Tensor* s = n->src[j];
                if (!s) continue;
                Backend* from = memory_owner(s, plan, backends);
                if (from == sp.backend) continue;
                Tensor*& c = copy_of[{s, sp.backend}];
                if (!c) {
                    c = copies_ctx.new_tensor(s->type, kMaxDims, s->ne);
                    for (int i = 0; i < kMaxDims; ++i) c->nb[i] = s->nb[i];  // same byte layout as s
                    c->set_name(std::string("copy of ") + s->name);
                    sp.copies.push_back({s, c, from});
                    ++plan.n_copies;
                }
                sp.swaps.push_back({n, j, c});
            }
        }
    }
    return plan;
}

}  // namespace sched

using sched::root_of;

struct BackendScheduler::Impl {
    std::vector<Backend*> backends;
    std::unique_ptr<Context> copies_ctx;
    sched::Plan plan;
    const Graph* graph = nullptr;
    size_t graph_nodes = 0;
    std::vector<std::unique_ptr<Buffer>> buffers;  // intermediates, one per backend

    int index(const Backend* b) const {
        return (int)(std::find(backends.begin(), backends.end(), b) - backends.begin());
    }
    void place(Graph& g);
    void run_copy(const sched::Copy& c, Backend* to);
};

// Memory by lifetime: execution is a sequence of steps (each split's copies, then its nodes); a tensor
// holds its range from the step that writes it to the last step that reads it.
void BackendScheduler::Impl::place(Graph& g) {
    struct Step {
        Tensor* writes;  // nullptr: writes nothing new (in-place op)
        std::vector<Tensor*> reads;
    };
    std::vector<Step> steps;
    std::unordered_map<Tensor*, Backend*> home;  // tensors that get memory here -> their backend
    for (Tensor* l : g.leafs)
        if (!l->data && !l->view_src) home[l] = backends.back();  // inputs: host, whole graph
    for (const sched::Split& sp : plan.splits) {
        for (const sched::Copy& c : sp.copies) {
            home[c.dst] = sp.backend;
            steps.push_back({c.dst, {root_of(c.src)}});
        }
        std::unordered_map<const Tensor*, Tensor*> swapped;
        for (const sched::Swap& s : sp.swaps) swapped[s.node->src[s.slot]] = s.copy;
        for (Tensor* n : sp.graph.nodes) {
            Step st{nullptr, {}};
            if (!n->data && !n->view_src) {
                home[n] = sp.backend;
                st.writes = n;
            }
            for (Tensor* s : n->src) {
                if (!s) continue;
                auto it = swapped.find(s);
                st.reads.push_back(it != swapped.end() ? it->second : root_of(s));
            }
            steps.push_back(std::move(st));
        }
    }
    std::unordered_map<Tensor*, size_t> last_use;
    for (size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].writes) last_use[steps[i].writes] = i;  // unread results are freed after their step
        for (Tensor* r : steps[i].reads) last_use[r] = i;
    }
    std::unordered_set<Tensor*> keep;  // inputs, and outputs (or views of them) read by the caller
    for (Tensor* l : g.leafs)
        if (home.count(l)) keep.insert(l);
    for (Tensor* n : g.nodes)
        if (n->flags & kFlagOutput) keep.insert(root_of(n));

    std::vector<OffsetPlanner> planners(backends.size());
    std::unordered_map<Tensor*, size_t> offset;
    auto alloc = [&](Tensor* t) { offset[t] = planners[(size_t)index(home[t])].alloc(t->nbytes()); };
    for (Tensor* l : g.leafs)
        if (home.count(l)) alloc(l);
    for (size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].writes) alloc(steps[i].writes);
        std::unordered_set<Tensor*> done;
        auto release = [&](Tensor* r) {
            if (!done.insert(r).second || last_use[r] != i || keep.count(r) || !home.count(r)) return;
            planners[(size_t)index(home[r])].release(offset[r], r->nbytes());
        };
        if (steps[i].writes) release(steps[i].writes);
        for (Tensor* r : steps[i].reads) release(r);
    }

    for (size_t b = 0; b < backends.size(); ++b) {
        const size_t need = planners[b].size();
        if (need == 0) continue;
        if (!buffers[b] || buffers[b]->size < need) {
            buffers[b].reset();
            buffers[b] = backends[b]->alloc_buffer(need + need / 8);
        }
    }
    for (auto& [t, off] : offset) {
        Buffer* buf = buffers[(size_t)index(home[t])].get();
        t->data = (char*)buf->base + off;
        t->buffer = buf;
    }
    for (Tensor* n : g.nodes)  // views (of views) resolve through view_src, which is the root
        if (n->view_src && n->view_src->data) {
            n->data = (char*)n->view_src->data + n->view_offs;
            n->buffer = n->view_src->buffer;
        }
}

BackendScheduler::BackendScheduler(std::vector<Backend*> backends) : impl_(std::make_unique<Impl>()) {
    if (backends.empty()) throw Error("backend scheduler: no backends");
    for (Backend* b : backends)
        if (!b) throw Error("backend scheduler: null backend");
    if (!backends.back()->is_host())
        throw Error("backend scheduler: the last backend must be the host (CPU) backend, not '" +
                    backends.back()->name() + "'");
    impl_->backends = std::move(backends);
    impl_->buffers.resize(impl_->backends.size());
}

BackendScheduler::~BackendScheduler() = default;

void BackendScheduler::allocate(Graph& g) {
    impl_->copies_ctx = std::make_unique<Context>(0, true);
    impl_->plan = sched::make_plan(g, impl_->backends, *impl_->copies_ctx);
    impl_->place(g);
    impl_->graph = &g;
    impl_->graph_nodes = g.nodes.size();
}

void BackendScheduler::Impl::run_copy(const sched::Copy& c, Backend* to) {
    const size_t n = c.src->nbytes();
    if (c.from->is_host()) {
        to->tensor_set(c.dst, c.src->data, 0, n);
    } else if (to->is_host()) {
        c.from->tensor_get(c.src, c.dst->data, 0, n);
    } else {  // device to device through the host
        std::vector<char> tmp(n);
        c.from->tensor_get(c.src, tmp.data(), 0, n);
        to->tensor_set(c.dst, tmp.data(), 0, n);
    }
}

void BackendScheduler::compute(Graph& g) {
    Impl& m = *impl_;
    if (m.graph != &g || m.graph_nodes != g.nodes.size())
        throw Error("backend scheduler: compute() needs the graph of the last allocate()");
    std::vector<std::unique_ptr<Event>> done(m.backends.size());  // after each backend's last split
    for (sched::Split& sp : m.plan.splits) {
        for (const sched::Copy& c : sp.copies) {
            auto& ev = done[(size_t)m.index(c.from)];
            if (ev) sp.backend->wait_event(*ev);  // the producing split has finished before we read
            m.run_copy(c, sp.backend);
        }
        // Swapping twice restores the original sources, also when the backend throws.
        for (sched::Swap& s : sp.swaps) std::swap(s.node->src[s.slot], s.copy);
        struct Restore {
            sched::Split& sp;
            ~Restore() {
                for (sched::Swap& s : sp.swaps) std::swap(s.node->src[s.slot], s.copy);
            }
        } restore{sp};
        sp.backend->graph_compute(sp.graph);
        done[(size_t)m.index(sp.backend)] = sp.backend->record_event();
    }
    for (size_t b = 0; b < m.backends.size(); ++b)
        if (done[b]) m.backends[b]->synchronize();
}

Backend* BackendScheduler::backend_of(const Tensor* node) const {
    auto it = impl_->plan.where.find(node);
    return it == impl_->plan.where.end() ? nullptr : it->second;
}

int BackendScheduler::n_splits() const {
    return (int)impl_->plan.splits.size();
}

int BackendScheduler::n_copies() const {
    return impl_->plan.n_copies;
}

size_t BackendScheduler::buffer_size(const Backend* backend) const {
    const int i = impl_->index(backend);
    if (i >= (int)impl_->backends.size() || !impl_->buffers[(size_t)i]) return 0;
    return impl_->buffers[(size_t)i]->size;
}

}  // namespace ggml
