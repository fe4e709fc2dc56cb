// Helpers of the CUDA and scheduler tests: skipping without a device, random data, and a harness that
// builds one graph twice and runs it on the CPU and on CUDA.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ggml/backend.h"
#include "ggml/ggml.h"
#include "ggml/quants.h"
#include "ggml/src/cpu/kernels.h"

namespace cuda_test {

using namespace ggml;

// Tests that need a GPU end here when there is none: exit code 77, which ctest reports as skipped
// (SKIP_RETURN_CODE), with the reason on stdout. They never pass without having run.
inline void require_cuda() {
    if (cuda_device_count() > 0) return;
    std::printf("SKIPPED: no CUDA device: %s\n", cuda_status().c_str());
    std::fflush(stdout);
    std::exit(77);
}

// One backend per test process (creating a CUDA context is slow).
inline Backend& cuda_backend() {
    require_cuda();
    static std::unique_ptr<Backend> b = make_cuda_backend(0);
    return *b;
}

inline std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

// Tolerances relative to the largest value of a result. Plain float steps give identical bytes (no
// tolerance); functions CUDA and glibc may round differently (exp, cos, sin) stay within a few ulps;
// dot products of float rows summed in double in another order, within a few ulps of the sum.
constexpr double kUlpTol = 1e-6;
constexpr double kUlpTolFloatDot = 1e-5;

using Bytes = std::vector<uint8_t>;

inline Bytes bytes_of(const void* p, size_t n) {
    Bytes b(n);
    std::memcpy(b.data(), p, n);
    return b;
}
inline Bytes bytes_of(const std::vector<float>& v) {
    return bytes_of(v.data(), v.size() * sizeof(float));
}
inline Bytes bytes_of(const std::vector<int32_t>& v) {
    return bytes_of(v.data(), v.size() * sizeof(int32_t));
}

// Rows of ne0 floats converted to type t with its reference converter (the bytes a GGUF would hold).
inline Bytes to_type(Type t, const std::vector<float>& x, int64_t ne0) {
    const int64_t rows = (int64_t)x.size() / ne0;
    Bytes out(row_size(t, ne0) * (size_t)rows);
    for (int64_t r = 0; r < rows; ++r)
        type_traits(t).from_float_ref(x.data() + r * ne0, out.data() + (size_t)r * row_size(t, ne0), ne0);
    return out;
}

inline std::vector<float> floats_of(const Bytes& b) {
    std::vector<float> f(b.size() / sizeof(float));
    std::memcpy(f.data(), b.data(), f.size() * sizeof(float));
    return f;
}

// Leaves of a test graph with their contents; the harness gives them memory on each backend.
struct Inputs {
    Context& ctx;
    std::vector<std::pair<Tensor*, Bytes>> leaves;
    Tensor* add(Type type, std::vector<int64_t> ne, Bytes data) {
        Tensor* t = ctx.new_tensor(type, (int)ne.size(), ne.data());
        REQUIRE(data.size() == t->nbytes());
        leaves.emplace_back(t, std::move(data));
        return t;
    }
    Tensor* f32(std::vector<int64_t> ne, const std::vector<float>& v) {
        return add(Type::F32, std::move(ne), bytes_of(v));
    }
    Tensor* i32(std::vector<int64_t> ne, const std::vector<int32_t>& v) {
        return add(Type::I32, std::move(ne), bytes_of(v));
    }
};
using Build = std::function<Tensor*(Inputs&)>;

// The bytes of the result of build, computed by the CPU backend.
inline Bytes run_cpu(const Build& build, int n_threads = 2) {
    Context ctx;
    Inputs in{ctx, {}};
    Tensor* out = build(in);
    for (auto& [t, data] : in.leaves) t->data = data.data();  // owned by `in`: in-place ops may write it
    auto cpu = make_cpu_backend(n_threads);
    GraphAllocator alloc(*cpu);
    Graph g;
    g.build_forward(out);
    alloc.allocate(g);
    cpu->graph_compute(g);
    return bytes_of(out->data, out->nbytes());
}

// The same on CUDA, every leaf uploaded to the device first. Every node must run on CUDA.
inline Bytes run_cuda(const Build& build, Backend& cuda) {
    Context ctx;
    Inputs in{ctx, {}};
    Tensor* out = build(in);
    std::vector<Tensor*> leaves;
    for (auto& [t, data] : in.leaves) leaves.push_back(t);
    auto buf = alloc_tensors(cuda, leaves);
    for (auto& [t, data] : in.leaves) tensor_set(t, data.data(), 0, data.size());
    Graph g;
    g.build_forward(out);
    for (const Tensor* n : g.nodes) {
        INFO("op " << op_name(n->op));
        REQUIRE(cuda.supports_op(n));
    }
    GraphAllocator alloc(cuda);
    alloc.allocate(g);
    cuda.graph_compute(g);
    Bytes result(out->nbytes());
    tensor_get(out, result.data(), 0, result.size());
    return result;
}

// Largest |got - ref| relative to the largest |ref| (1 if ref is all zero).
inline double max_rel_error(const std::vector<float>& got, const std::vector<float>& ref) {
    REQUIRE(got.size() == ref.size());
    double scale = 0, err = 0;
    for (float r : ref) scale = std::max(scale, (double)std::fabs(r));
    if (scale == 0) scale = 1;
    for (size_t i = 0; i < ref.size(); ++i) {
        if (std::isnan(got[i]) != std::isnan(ref[i])) return INFINITY;
        if (!std::isnan(ref[i])) err = std::max(err, std::fabs((double)got[i] - ref[i]) / scale);
    }
    return err;
}

// The CPU's and CUDA's float results agree within tol (relative to the largest value).
inline void check_close(const Build& build, double tol) {
    Backend& cuda = cuda_backend();
    const auto ref = floats_of(run_cpu(build));
    const auto got = floats_of(run_cuda(build, cuda));
    const double err = max_rel_error(got, ref);
    INFO("max relative error " << err << " (tolerance " << tol << ")");
    REQUIRE(err <= tol);
}

// The CPU's result at its reference (scalar) level: the arithmetic the kernels repeat. The CPU's SIMD
// levels sum F32/F16/BF16 dot products in float lanes instead of in double, a last-bit difference in an
// attention score that the f16 rounding of a softmax weight (for an F16 V) can turn into 2^-11 of that
// weight; against the reference level the GPU's attention is exact.
inline Bytes run_cpu_reference(const Build& build) {
    struct LevelScope {
        ggml::cpu::IsaLevel saved = ggml::cpu::isa_level();
        LevelScope() { ggml::cpu::set_isa_level_for_testing(ggml::cpu::IsaLevel::Scalar); }
        ~LevelScope() { ggml::cpu::set_isa_level_for_testing(saved); }
    } scalar;
    return run_cpu(build);
}

// CUDA's result is the bytes of the CPU's at its reference level.
inline void check_identical_to_reference(const Build& build) {
    Backend& cuda = cuda_backend();
    const Bytes ref = run_cpu_reference(build);
    const Bytes got = run_cuda(build, cuda);
    INFO("max relative error " << max_rel_error(floats_of(got), floats_of(ref))
                               << " against the CPU reference level");
    REQUIRE(got == ref);
}

// The CPU's and CUDA's results are the same bytes.
inline void check_identical(const Build& build) {
    Backend& cuda = cuda_backend();
    const Bytes ref = run_cpu(build);
    const Bytes got = run_cuda(build, cuda);
    REQUIRE(got.size() == ref.size());
    size_t differ = 0;
    for (size_t i = 0; i < ref.size(); ++i) differ += got[i] != ref[i];
    INFO(differ << " of " << ref.size() << " bytes differ");
    REQUIRE(differ == 0);
}

}  // namespace cuda_test
