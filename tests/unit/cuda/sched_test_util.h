// For the scheduler tests: a device simulated on the CPU, and a small llama-shaped model whose layers can
// be placed on any backend.
#pragma once

#include <set>

#include "cuda_test_util.h"

namespace cuda_test {

// A non-host backend that computes with the CPU kernels. Its buffers hand out addresses that are not
// valid host pointers (a tag in the top bits): a host backend touching them faults, and the device itself
// refuses any tensor outside its memory. So results that match prove that the scheduler copied exactly
// what each backend needed.
class FakeDevice final : public Backend {
  public:
    explicit FakeDevice(std::set<Op> unsupported = {}) : unsupported_(std::move(unsupported)) {}

    std::string name() const override { return "FAKE"; }
    bool is_host() const override { return false; }

    std::unique_ptr<Buffer> alloc_buffer(size_t size) override {
        auto b = std::make_unique<FakeBuffer>();
        b->real = std::make_unique<char[]>(size ? size : 1);
        b->backend = this;
        b->size = size;
        b->base = tag(b->real.get());
        return b;
    }

    bool supports_op(const Tensor* t) const override { return !unsupported_.count(t->op); }

    void graph_compute(Graph& g) override {
        ++computes;
        std::vector<std::pair<Tensor*, void*>> saved;
        auto untag_tensor = [&](Tensor* t) {
            for (auto& [s, d] : saved)
                if (s == t) return;
            const Tensor* r = t->view_src ? t->view_src : t;
            if (!r->buffer || r->buffer->backend != this)
                throw Error(std::string("FAKE: tensor '") + t->name + "' is not in device memory");
            saved.emplace_back(t, t->data);
            t->data = untag(t->data);
        };
        for (Tensor* n : g.nodes) {
            untag_tensor(n);
            for (Tensor* s : n->src)
                if (s) untag_tensor(s);
        }
        cpu_->graph_compute(g);
        for (auto& [t, d] : saved) t->data = d;
    }

    void tensor_set(Tensor* t, const void* src, size_t offset, size_t size) override {
        std::memcpy((char*)untag(t->data) + offset, src, size);
    }
    void tensor_get(const Tensor* t, void* dst, size_t offset, size_t size) override {
        std::memcpy(dst, (const char*)untag(t->data) + offset, size);
    }

    struct FakeEvent : Event {
        int* waits;
        void synchronize() override { ++*waits; }
    };
    std::unique_ptr<Event> record_event() override {
        auto e = std::make_unique<FakeEvent>();
        e->waits = &event_waits;
        return e;
    }

    int computes = 0;
    int event_waits = 0;

  private:
    static constexpr uintptr_t kTag = uintptr_t(1) << 62;  // non-canonical on x86-64: any access faults
    static void* tag(void* p) { return (void*)((uintptr_t)p | kTag); }
    static void* untag(void* p) { return (void*)((uintptr_t)p & ~kTag); }

    struct FakeBuffer : Buffer {
        std::unique_ptr<char[]> real;
    };
    std::set<Op> unsupported_;
    std::unique_ptr<CpuBackend> cpu_ = make_cpu_backend(2);
};

// A two-layer llama-shaped model (GQA, SwiGLU, RoPE, KV cache) built like engine/model/arch/llama.cpp.
struct MiniLlama {
    static constexpr int kEmbd = 128, kHead = 4, kHeadKv = 2, kHeadDim = 32, kFf = 96, kVocab = 48,
                         kLayers = 2, kCtx = 32;
    struct Layer {
        Tensor *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *gate, *up, *down, *k_cache, *v_cache;
    };

    Context ctx;
    Tensor *tok_embd, *out_norm, *output;
    std::vector<Layer> layers;
    std::vector<std::pair<Tensor*, Bytes>> contents;
    std::vector<std::unique_ptr<Buffer>> buffers;

    // Weights of type wtype (norms F32), KV cache of type cache_type.
    MiniLlama(Type wtype, Type cache_type, uint32_t seed) {
        auto weight = [&](Type t, int64_t ne0, int64_t ne1) {
            Tensor* w = ctx.new_tensor_2d(t, ne0, ne1);
            contents.emplace_back(w, to_type(t, randn((size_t)(ne0 * ne1), seed++, 0.3f), ne0));
            return w;
        };
        auto norm = [&]() {
            Tensor* w = ctx.new_tensor_1d(Type::F32, kEmbd);
            auto v = randn(kEmbd, seed++, 0.1f);
            for (auto& x : v) x += 1.0f;
            contents.emplace_back(w, bytes_of(v));
            return w;
        };
        auto cache = [&]() {
            Tensor* c = ctx.new_tensor_2d(cache_type, kHeadDim * kHeadKv, kCtx);
            contents.emplace_back(c, Bytes(c->nbytes(), 0));
            return c;
        };
        tok_embd = weight(Type::F32, kEmbd, kVocab);
        for (int il = 0; il < kLayers; ++il) {
            Layer l{};
            l.attn_norm = norm();
            l.wq = weight(wtype, kEmbd, kHead * kHeadDim);
            l.wk = weight(wtype, kEmbd, kHeadKv * kHeadDim);
            l.wv = weight(wtype, kEmbd, kHeadKv * kHeadDim);
            l.wo = weight(wtype, kHead * kHeadDim, kEmbd);
            l.ffn_norm = norm();
            l.gate = weight(wtype, kEmbd, kFf);
            l.up = weight(wtype, kEmbd, kFf);
            l.down = weight(wtype, kFf, kEmbd);
            l.k_cache = cache();
            l.v_cache = cache();
            layers.push_back(l);
        }
        out_norm = norm();
        output = weight(wtype, kEmbd, kVocab);
    }

    // Puts the tensors on backend b: in a buffer of b (uploaded), or for the host without a buffer,
    // flagged as weights the way mmapped model weights are.
    void place(std::vector<Tensor*> ts, Backend* b) {
        for (Tensor* t : ts) {
            if (b) continue;
            for (auto& [w, data] : contents)
                if (w == t) t->data = data.data();
            t->flags |= kFlagParam;
        }
        if (!b) return;
        buffers.push_back(alloc_tensors(*b, ts));
        for (Tensor* t : ts)
            for (auto& [w, data] : contents)
                if (w == t) tensor_set(t, data.data(), 0, data.size());
    }
    std::vector<Tensor*> layer_tensors(int il) const {
        const Layer& l = layers[(size_t)il];
        return {l.attn_norm, l.wq, l.wk, l.wv, l.wo, l.ffn_norm, l.gate, l.up, l.down, l.k_cache, l.v_cache};
    }
    // Layers [0, first_offloaded) on the host, the rest and the output on `device` (nullptr: all host).
    void place_all(Backend* device, int first_offloaded) {
        place({tok_embd}, nullptr);
        for (int il = 0; il < kLayers; ++il)
            place(layer_tensors(il), il >= first_offloaded ? device : nullptr);
        place({out_norm, output}, device);
    }

    struct Graphed {
        Tensor *tokens, *pos, *cells, *mask, *logits;
    };
    // Tokens at consecutive positions starting at p0 (one sequence, cells = positions), attending to
    // the first n_kv cells.
    Graphed build(Context& gctx, int n_tokens, int n_kv, bool fa) const {
        Graphed in{};
        in.tokens = gctx.new_tensor_1d(Type::I32, n_tokens);
        in.pos = gctx.new_tensor_1d(Type::I32, n_tokens);
        in.cells = gctx.new_tensor_1d(Type::I32, n_tokens);
        in.mask = gctx.new_tensor_2d(Type::F32, n_kv, n_tokens);
        for (Tensor* t : {in.tokens, in.pos, in.cells, in.mask}) t->flags |= kFlagInput;
        const float kq_scale = 1.0f / std::sqrt((float)kHeadDim);
        Tensor* x = get_rows(gctx, tok_embd, in.tokens);
        for (const Layer& w : layers) {
            Tensor* cur = mul(gctx, rms_norm(gctx, x, 1e-5f), w.attn_norm);
            Tensor* q = reshape_3d(gctx, mul_mat(gctx, w.wq, cur), kHeadDim, kHead, n_tokens);
            Tensor* k = reshape_3d(gctx, mul_mat(gctx, w.wk, cur), kHeadDim, kHeadKv, n_tokens);
            Tensor* v = mul_mat(gctx, w.wv, cur);
            q = rope(gctx, q, in.pos, kHeadDim, kRopeNeox, 10000.0f, 1.0f);
            k = rope(gctx, k, in.pos, kHeadDim, kRopeNeox, 10000.0f, 1.0f);
            Tensor* kc =
                set_rows(gctx, w.k_cache, reshape_2d(gctx, k, kHeadDim * kHeadKv, n_tokens), in.cells);
            Tensor* vc = set_rows(gctx, w.v_cache, v, in.cells);
            Tensor* K = view_3d(gctx, kc, kHeadDim, n_kv, kHeadKv, row_size(kc->type, kHeadDim * kHeadKv),
                                row_size(kc->type, kHeadDim), 0);
            Tensor* V = view_3d(gctx, vc, kHeadDim, n_kv, kHeadKv, row_size(vc->type, kHeadDim * kHeadKv),
                                row_size(vc->type, kHeadDim), 0);
            Tensor* Q = permute(gctx, q, 0, 2, 1, 3);
            Tensor* attn;
            if (fa) {
                attn = flash_attn(gctx, Q, K, V, in.mask, kq_scale);
            } else {
                Tensor* kq = soft_max(gctx, mul_mat(gctx, K, Q), in.mask, kq_scale);
                attn = cont(gctx, permute(gctx, mul_mat_t(gctx, V, kq), 0, 2, 1, 3));
            }
            cur = mul_mat(gctx, w.wo, reshape_2d(gctx, attn, kHeadDim * kHead, n_tokens));
            x = add(gctx, cur, x);
            cur = mul(gctx, rms_norm(gctx, x, 1e-5f), w.ffn_norm);
            cur = swiglu(gctx, mul_mat(gctx, w.gate, cur), mul_mat(gctx, w.up, cur));
            x = add(gctx, mul_mat(gctx, w.down, cur), x);
        }
        x = mul(gctx, rms_norm(gctx, x, 1e-5f), out_norm);
        in.logits = mul_mat(gctx, output, x);
        in.logits->flags |= kFlagOutput;
        return in;
    }
};

// Fills the inputs of a step: tokens at positions p0.., causal mask over n_kv cells.
inline void set_inputs(const MiniLlama::Graphed& in, const std::vector<int32_t>& tokens, int p0, int n_kv) {
    const int n = (int)tokens.size();
    std::vector<int32_t> pos(n);
    for (int i = 0; i < n; ++i) pos[(size_t)i] = p0 + i;
    std::vector<float> mask((size_t)n * n_kv);
    for (int t = 0; t < n; ++t)
        for (int j = 0; j < n_kv; ++j) mask[(size_t)t * n_kv + j] = j <= p0 + t ? 0.0f : -INFINITY;
    tensor_set(in.tokens, tokens.data(), 0, tokens.size() * 4);
    tensor_set(in.pos, pos.data(), 0, pos.size() * 4);
    tensor_set(in.cells, pos.data(), 0, pos.size() * 4);
    tensor_set(in.mask, mask.data(), 0, mask.size() * 4);
}

// Logits of a prompt step (tokens 0..n-1) and a following one-token step, through a scheduler over
// `backends` with the model placed as given.
inline std::vector<float> run_two_steps(MiniLlama& m, std::vector<Backend*> backends, bool fa,
                                        BackendScheduler* keep = nullptr) {
    std::unique_ptr<BackendScheduler> own;
    BackendScheduler* sched = keep;
    if (!sched) {
        own = std::make_unique<BackendScheduler>(backends);
        sched = own.get();
    }
    std::vector<float> out;
    const std::vector<std::vector<int32_t>> steps = {{3, 17, 5, 40, 9}, {22}};
    int p0 = 0;
    for (const auto& toks : steps) {
        Context gctx;
        const int n_kv = MiniLlama::kCtx;
        auto in = m.build(gctx, (int)toks.size(), n_kv, fa);
        Graph g;
        g.build_forward(in.logits);
        sched->allocate(g);
        set_inputs(in, toks, p0, n_kv);
        sched->compute(g);
        std::vector<float> logits((size_t)in.logits->nelements());
        tensor_get(in.logits, logits.data(), 0, logits.size() * 4);
        out.insert(out.end(), logits.begin(), logits.end());
        p0 += (int)toks.size();
    }
    return out;
}

}  // namespace cuda_test
