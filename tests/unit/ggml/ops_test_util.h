// Helpers of the op tests: a CPU backend with its allocator, random data, input tensors.
#pragma once

#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "ggml/backend.h"
#include "ggml/ggml.h"

namespace ops_test {

using namespace ggml;

struct Runner {
    std::unique_ptr<CpuBackend> backend = make_cpu_backend(4);
    GraphAllocator alloc{*backend};
    void run(Tensor* out, int nth) {
        Graph g;
        g.build_forward(out);
        alloc.allocate(g);
        backend->set_n_threads(nth);
        backend->graph_compute(g);
    }
};

inline std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

// An F32 input tensor holding data (owned by the test context).
inline Tensor* input(Context& ctx, std::vector<float>& data, std::initializer_list<int64_t> shape) {
    Tensor* t = ctx.new_tensor(Type::F32, (int)shape.size(), shape.begin());
    REQUIRE((size_t)t->nelements() == data.size());
    t->data = data.data();
    return t;
}

inline Tensor* quantized(Context& ctx, Type type, const std::vector<float>& data, int64_t ne0, int64_t ne1,
                         std::vector<uint8_t>& storage) {
    Tensor* t = ctx.new_tensor_2d(type, ne0, ne1);
    storage.resize(t->nbytes());
    for (int64_t r = 0; r < ne1; ++r)
        type_traits(type).from_float_ref(data.data() + r * ne0, storage.data() + r * t->nb[1], ne0);
    t->data = storage.data();
    return t;
}

inline std::vector<float> read(const Tensor* t) {
    std::vector<float> out((size_t)t->nelements());
    REQUIRE(t->is_contiguous());
    std::memcpy(out.data(), t->data, out.size() * sizeof(float));
    return out;
}

}  // namespace ops_test
