// The backend scheduler on the CPU and on a simulated device (no GPU needed): assignment, splits, copies
// between backends, memory reuse, errors, and results identical to the CPU alone.
#include "sched_test_util.h"

using namespace cuda_test;

namespace {

std::vector<float> cpu_only(Type wtype, bool fa) {
    MiniLlama m(wtype, Type::F16, 7);
    m.place_all(nullptr, MiniLlama::kLayers);
    auto cpu = make_cpu_backend(2);
    return run_two_steps(m, {cpu.get()}, fa);
}

}  // namespace

TEST_CASE("scheduler with the CPU alone: one split, no copies, the allocator's results", "[sched]") {
    auto cpu = make_cpu_backend(2);
    for (bool fa : {false, true}) {
        // Reference: the plain graph allocator.
        MiniLlama ref(Type::Q8_0, Type::F16, 7);
        ref.place_all(nullptr, MiniLlama::kLayers);
        std::vector<float> expect;
        GraphAllocator alloc(*cpu);
        int p0 = 0;
        for (const std::vector<int32_t>& toks :
             {std::vector<int32_t>{3, 17, 5, 40, 9}, std::vector<int32_t>{22}}) {
            Context gctx;
            auto in = ref.build(gctx, (int)toks.size(), MiniLlama::kCtx, fa);
            Graph g;
            g.build_forward(in.logits);
            alloc.allocate(g);
            set_inputs(in, toks, p0, MiniLlama::kCtx);
            cpu->graph_compute(g);
            const float* l = (const float*)in.logits->data;
            expect.insert(expect.end(), l, l + in.logits->nelements());
            p0 += (int)toks.size();
        }

        MiniLlama m(Type::Q8_0, Type::F16, 7);
        m.place_all(nullptr, MiniLlama::kLayers);
        BackendScheduler sched({cpu.get()});
        REQUIRE(run_two_steps(m, {}, fa, &sched) == expect);
        REQUIRE(sched.n_splits() == 1);
        REQUIRE(sched.n_copies() == 0);
    }
}

TEST_CASE("weights split between a device and the CPU give the CPU's results bit for bit", "[sched]") {
    for (bool fa : {false, true}) {
        for (int first_offloaded : {0, 1, 2}) {
            INFO("flash_attn " << fa << ", layers from " << first_offloaded << " on the device");
            const auto expect = cpu_only(Type::Q4_0, fa);
            FakeDevice dev;
            auto cpu = make_cpu_backend(2);
            MiniLlama m(Type::Q4_0, Type::F16, 7);
            m.place_all(&dev, first_offloaded);
            BackendScheduler sched({&dev, cpu.get()});
            REQUIRE(run_two_steps(m, {}, fa, &sched) == expect);
            REQUIRE(dev.computes > 0);
            // One split per backend run: host layers (with the embedding lookup), then the device.
            REQUIRE(sched.n_splits() == 2);
            REQUIRE(sched.n_copies() > 0);
        }
    }
}

TEST_CASE("ops a device lacks fall back to the CPU, with copies both ways", "[sched]") {
    for (bool fa : {false, true}) {
        const auto expect = cpu_only(Type::Q8_0, fa);
        FakeDevice dev({Op::Rope, Op::SoftMax});
        auto cpu = make_cpu_backend(2);
        MiniLlama m(Type::Q8_0, Type::F16, 7);
        m.place_all(&dev, 0);
        BackendScheduler sched({&dev, cpu.get()});
        REQUIRE(run_two_steps(m, {}, fa, &sched) == expect);
        REQUIRE(sched.n_splits() > 4);
    }
}

TEST_CASE("the scheduler's plan: weights pin ops, others follow their producer", "[sched]") {
    FakeDevice dev({Op::Rope});
    auto cpu = make_cpu_backend(1);
    MiniLlama m(Type::Q8_0, Type::F16, 7);
    m.place_all(&dev, 1);  // layer 0 on the host, layer 1 and the output on the device
    BackendScheduler sched({&dev, cpu.get()});
    Context gctx;
    auto in = m.build(gctx, 3, MiniLlama::kCtx, false);
    Graph g;
    g.build_forward(in.logits);
    sched.allocate(g);

    REQUIRE(sched.backend_of(in.logits) == &dev);     // the output weight lives there
    REQUIRE(sched.backend_of(in.tokens) == nullptr);  // leaves are not scheduled
    int rope_nodes = 0;
    for (Tensor* n : g.nodes) {
        if (n->op == Op::Rope) {
            REQUIRE(sched.backend_of(n) == cpu.get());  // unsupported: falls back
            ++rope_nodes;
        }
        if (n->op == Op::SetRows) {
            // In place: where the cache lives.
            const bool dev_cache = n->view_src == m.layers[1].k_cache || n->view_src == m.layers[1].v_cache;
            REQUIRE(sched.backend_of(n) == (dev_cache ? (Backend*)&dev : cpu.get()));
        }
        const Tensor* w = n->src[0];
        if (n->op == Op::MulMat && w->op == Op::None)  // weights: on the device if in its buffer
            REQUIRE(sched.backend_of(n) == (w->buffer ? (Backend*)&dev : cpu.get()));
    }
    REQUIRE(rope_nodes == 4);
    // Inputs live on the host, ready for the caller.
    REQUIRE(in.tokens->buffer->backend == cpu.get());
    REQUIRE(in.mask->buffer->backend == cpu.get());
    REQUIRE(in.logits->buffer->backend == &dev);
}

TEST_CASE("splits wait for the events of the splits they copy from", "[sched]") {
    FakeDevice dev({Op::SoftMax});
    auto cpu = make_cpu_backend(1);
    MiniLlama m(Type::Q8_0, Type::F16, 7);
    m.place_all(&dev, 0);
    BackendScheduler sched({&dev, cpu.get()});
    run_two_steps(m, {}, false, &sched);
    // Every copy from the device to the host waits for the device's event; the host's own work is
    // synchronous and records none.
    REQUIRE(dev.event_waits > 0);
}

TEST_CASE("intermediate memory is reused by lifetime on every backend", "[sched]") {
    FakeDevice dev;
    auto cpu = make_cpu_backend(1);
    Context ctx;
    const int64_t n = 1 << 16;
    std::vector<float> w(n, 0.5f);
    Tensor* weight = ctx.new_tensor_1d(Type::F32, n);
    auto buf = alloc_tensors(dev, std::span<Tensor* const>(&weight, 1));
    tensor_set(weight, w.data(), 0, w.size() * 4);
    Tensor* x = ctx.new_tensor_1d(Type::F32, n);
    x->flags |= kFlagInput;
    Tensor* cur = x;
    for (int i = 0; i < 10; ++i) cur = mul(ctx, cur, weight);  // 10 results of 256 KiB, each read once
    cur->flags |= kFlagOutput;
    Graph g;
    g.build_forward(cur);
    BackendScheduler sched({&dev, cpu.get()});
    sched.allocate(g);
    REQUIRE(sched.n_splits() == 1);
    REQUIRE(sched.n_copies() == 1);  // the input, from the host
    const size_t one = (size_t)n * 4;
    REQUIRE(sched.buffer_size(&dev) <= 4 * one);       // the copy, two live results, slack
    REQUIRE(sched.buffer_size(cpu.get()) <= 2 * one);  // the input

    std::vector<float> xs(n, 2.0f);
    tensor_set(x, xs.data(), 0, xs.size() * 4);
    sched.compute(g);
    std::vector<float> out(n);
    tensor_get(cur, out.data(), 0, out.size() * 4);
    for (float v : out) REQUIRE(v == 2.0f / 1024.0f);
}

TEST_CASE("scheduler errors are clear", "[sched][errors]") {
    auto cpu = make_cpu_backend(1);
    FakeDevice dev;
    REQUIRE_THROWS_WITH(BackendScheduler({}), Catch::Contains("no backends"));
    REQUIRE_THROWS_WITH(BackendScheduler({cpu.get(), &dev}), Catch::Contains("must be the host"));

    SECTION("an in-place op on a backend that cannot compute it") {
        FakeDevice no_set_rows({Op::SetRows});
        MiniLlama m(Type::Q8_0, Type::F16, 7);
        m.place_all(&no_set_rows, 0);
        BackendScheduler sched({&no_set_rows, cpu.get()});
        Context gctx;
        auto in = m.build(gctx, 2, MiniLlama::kCtx, true);
        Graph g;
        g.build_forward(in.logits);
        REQUIRE_THROWS_WITH(sched.allocate(g),
                            Catch::Contains("set_rows") && Catch::Contains("cannot compute"));
    }
    SECTION("memory of a backend the scheduler does not know") {
        FakeDevice other;
        MiniLlama m(Type::Q8_0, Type::F16, 7);
        m.place_all(&other, 1);
        BackendScheduler sched({&dev, cpu.get()});
        Context gctx;
        auto in = m.build(gctx, 2, MiniLlama::kCtx, true);
        Graph g;
        g.build_forward(in.logits);
        REQUIRE_THROWS_WITH(sched.allocate(g), Catch::Contains("not one of the scheduler's backends"));
    }
    SECTION("compute of a graph that was not allocated") {
        MiniLlama m(Type::Q8_0, Type::F16, 7);
        m.place_all(nullptr, 2);
        BackendScheduler sched({cpu.get()});
        Context gctx;
        auto a = m.build(gctx, 2, MiniLlama::kCtx, true);
        auto b = m.build(gctx, 2, MiniLlama::kCtx, true);
        Graph ga, gb;
        ga.build_forward(a.logits);
        gb.build_forward(b.logits);
        sched.allocate(ga);
        REQUIRE_THROWS_WITH(sched.compute(gb), Catch::Contains("last allocate"));
    }
}

TEST_CASE("tensor placement helpers check their arguments", "[sched][errors]") {
    FakeDevice dev;
    Context ctx;
    Tensor* t = ctx.new_tensor_1d(Type::F32, 8);
    t->set_name("w");
    auto buf = alloc_tensors(dev, std::span<Tensor* const>(&t, 1));
    REQUIRE(t->buffer == buf.get());
    std::vector<float> v(8, 1.5f), back(8);
    tensor_set(t, v.data(), 0, 32);
    tensor_get(t, back.data(), 0, 32);
    REQUIRE(back == v);
    REQUIRE_THROWS_WITH(tensor_set(t, v.data(), 4, 32), Catch::Contains("exceed tensor 'w'"));
    REQUIRE_THROWS_WITH(tensor_get(t, back.data(), 33, 0), Catch::Contains("exceed"));
    REQUIRE_THROWS_WITH(alloc_tensors(dev, std::span<Tensor* const>(&t, 1)),
                        Catch::Contains("already has memory"));
    // Plain host memory without a buffer works too.
    Tensor* h = ctx.new_tensor_1d(Type::F32, 8);
    h->data = v.data();
    tensor_get(h, back.data(), 0, 32);
    REQUIRE(back == v);
}
