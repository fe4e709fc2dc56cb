// The CUDA backend as a backend: memory and copies, events, CUDA graphs replayed with new inputs, errors
// found by kernels, and the scheduler splitting a model between the GPU and the CPU.
#include "sched_test_util.h"

using namespace cuda_test;

TEST_CASE("CUDA buffers: tensor_set and tensor_get round trips, also past the staging chunk",
          "[cuda][backend]") {
    Backend& cuda = cuda_backend();
    REQUIRE(!cuda.is_host());
    REQUIRE(cuda.name() == "CUDA0");
    for (int64_t n : {int64_t(1), int64_t(1000), int64_t(5) << 20}) {  // 20 MiB crosses the 16 MiB chunks
        Context ctx;
        Tensor* t = ctx.new_tensor_1d(Type::F32, n);
        auto buf = alloc_tensors(cuda, std::span<Tensor* const>(&t, 1));
        const auto v = randn((size_t)n, 1);
        tensor_set(t, v.data(), 0, v.size() * 4);
        std::vector<float> back((size_t)n);
        tensor_get(t, back.data(), 0, back.size() * 4);
        REQUIRE(back == v);
        if (n > 10) {  // partial ranges
            std::vector<float> part(3);
            tensor_get(t, part.data(), 4 * 7, 12);
            REQUIRE(part == std::vector<float>(v.begin() + 7, v.begin() + 10));
        }
    }
}

TEST_CASE("CUDA events order work between backends", "[cuda][backend]") {
    Backend& cuda = cuda_backend();
    auto other = make_cuda_backend(0);
    Context ctx;
    Tensor* t = ctx.new_tensor_1d(Type::F32, 1 << 20);
    auto buf = alloc_tensors(cuda, std::span<Tensor* const>(&t, 1));
    const std::vector<float> v(1 << 20, 3.0f);
    tensor_set(t, v.data(), 0, v.size() * 4);
    auto ev = cuda.record_event();
    REQUIRE(ev != nullptr);
    other->wait_event(*ev);  // device-side wait on another stream
    ev->synchronize();       // host-side wait
    std::vector<float> back(v.size());
    tensor_get(t, back.data(), 0, back.size() * 4);
    REQUIRE(back == v);
}

TEST_CASE("CUDA graphs: replays use the new inputs and match direct launches", "[cuda][backend][graphs]") {
    require_cuda();
    CudaOptions with, without;
    without.cuda_graphs = false;
    auto graphs = make_cuda_backend(0, with);
    auto direct = make_cuda_backend(0, without);
    const int64_t K = 256, M = 64;
    const auto w = randn((size_t)(K * M), 2);
    // A decode-sized graph (one token) built anew each step, as the engine does, with a new input value.
    auto step = [&](Backend& b, GraphAllocator& alloc, Tensor* weight, const std::vector<float>& x) {
        Context ctx;
        Tensor* in = ctx.new_tensor_1d(Type::F32, K);
        in->flags |= kFlagInput;
        Tensor* out = silu(ctx, mul_mat(ctx, weight, rms_norm(ctx, in, 1e-5f)));
        Graph g;
        g.build_forward(out);
        alloc.allocate(g);  // the same addresses every step: the graph's key repeats
        tensor_set(in, x.data(), 0, x.size() * 4);
        b.graph_compute(g);
        std::vector<float> r((size_t)M);
        tensor_get(out, r.data(), 0, r.size() * 4);
        return r;
    };
    GraphAllocator alloc_g(*graphs), alloc_d(*direct);
    Context wctx;
    Tensor* wg = wctx.new_tensor_2d(Type::Q4_0, K, M);
    Tensor* wd = wctx.new_tensor_2d(Type::Q4_0, K, M);
    auto bg = alloc_tensors(*graphs, std::span<Tensor* const>(&wg, 1));
    auto bd = alloc_tensors(*direct, std::span<Tensor* const>(&wd, 1));
    const Bytes wq = to_type(Type::Q4_0, w, K);
    tensor_set(wg, wq.data(), 0, wq.size());
    tensor_set(wd, wq.data(), 0, wq.size());
    for (uint32_t s = 0; s < 6; ++s) {  // capture on the second step, replay after
        const auto x = randn((size_t)K, 100 + s);
        REQUIRE(step(*graphs, alloc_g, wg, x) == step(*direct, alloc_d, wd, x));
    }
}

TEST_CASE("CUDA kernels report bad row ids as errors, and the backend stays usable",
          "[cuda][backend][errors]") {
    Backend& cuda = cuda_backend();
    const auto w = randn(64 * 4, 3);
    const std::vector<int32_t> bad = {0, 4};  // 4 rows only
    Build b = [&](Inputs& in) { return get_rows(in.ctx, in.f32({64, 4}, w), in.i32({2}, bad)); };
    REQUIRE_THROWS_WITH(run_cuda(b, cuda), Catch::Contains("row id out of range"));
    const std::vector<int32_t> good = {3, 0};
    Build ok = [&](Inputs& in) { return get_rows(in.ctx, in.f32({64, 4}, w), in.i32({2}, good)); };
    REQUIRE(run_cuda(ok, cuda) == run_cpu(ok));
}

TEST_CASE("CUDA backend refuses host memory and unsupported ops with clear errors",
          "[cuda][backend][errors]") {
    Backend& cuda = cuda_backend();
    Context ctx;
    std::vector<float> host(32, 1.0f);
    Tensor* a = ctx.new_tensor_1d(Type::F32, 32);
    a->data = host.data();  // host memory: a kernel would fault
    a->set_name("host_tensor");
    Tensor* out = scale(ctx, a, 2.0f);
    Graph g;
    g.build_forward(out);
    GraphAllocator alloc(cuda);
    alloc.allocate(g);
    REQUIRE_THROWS_WITH(cuda.graph_compute(g),
                        Catch::Contains("host_tensor") && Catch::Contains("not in this device"));

    // dup into a K-quant has no CUDA kernel: not supported (the scheduler sends it to the CPU).
    Tensor* x = ctx.new_tensor_2d(Type::F32, 256, 2);
    REQUIRE(!cuda.supports_op(dup(ctx, x, Type::Q4_K)));
    REQUIRE(cuda.supports_op(dup(ctx, x, Type::Q8_0)));
}

TEST_CASE("scheduler: a model split between the GPU and the CPU gives the CPU's results", "[cuda][sched]") {
    Backend& cuda = cuda_backend();
    for (Type wtype : {Type::Q4_0, Type::Q8_0, Type::F16}) {
        for (bool fa : {false, true}) {
            for (int first_offloaded : {0, 1, 2}) {
                INFO("weights " << type_name(wtype) << " flash_attn " << fa << " layers from "
                                << first_offloaded);
                auto cpu = make_cpu_backend(2);
                MiniLlama ref(wtype, Type::F16, 9);
                ref.place_all(nullptr, MiniLlama::kLayers);
                const auto expect = run_two_steps(ref, {cpu.get()}, fa);

                MiniLlama m(wtype, Type::F16, 9);
                m.place_all(&cuda, first_offloaded);
                BackendScheduler sched({&cuda, cpu.get()});
                const auto got = run_two_steps(m, {}, fa, &sched);
                REQUIRE(sched.n_splits() == 2);
                REQUIRE(max_rel_error(got, expect) <= 1e-4);
            }
        }
    }
}

TEST_CASE("scheduler: a q8_0 KV cache on the GPU with flash attention", "[cuda][sched]") {
    Backend& cuda = cuda_backend();
    auto cpu = make_cpu_backend(2);
    MiniLlama ref(Type::Q5_1, Type::Q8_0, 11);
    ref.place_all(nullptr, MiniLlama::kLayers);
    const auto expect = run_two_steps(ref, {cpu.get()}, true);
    MiniLlama m(Type::Q5_1, Type::Q8_0, 11);
    m.place_all(&cuda, 0);
    BackendScheduler sched({&cuda, cpu.get()});
    REQUIRE(max_rel_error(run_two_steps(m, {}, true, &sched), expect) <= 1e-4);
}
