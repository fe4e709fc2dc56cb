// The per-type arithmetic of the CUDA kernels (ggml/src/cuda/*.h, compiled for host and device) checked
// on the host against the CPU references: half conversions, dequantization, quantizers and block dot
// products bit for bit, the order-free exact sum of softmax, tanh/GELU, norm, top_k's order and RoPE's
// angles (to an ulp: cos and sin). Runs on every machine, GPU or not.
#include <algorithm>

#include "cuda_test_util.h"
#include "ggml/src/cuda/block_dot.h"
#include "ggml/src/cuda/exact_sum.h"
#include "ggml/src/cuda/norm.h"
#include "ggml/src/cuda/quantize.h"
#include "ggml/src/cuda/rope.h"
#include "ggml/src/cuda/tanh.h"
#include "ggml/src/cuda/topk.h"

using namespace cuda_test;
namespace gc = ggml::cuda;

namespace {

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

// Floats that exercise rounding: random bit patterns (all exponents), and values near the f16 limits.
std::vector<float> tricky_floats() {
    std::vector<float> v;
    std::mt19937 rng(1);
    for (int i = 0; i < 200000; ++i) {
        const uint32_t u = rng();
        float f;
        std::memcpy(&f, &u, 4);
        v.push_back(f);
    }
    for (float f : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 6.1035156e-05f, 5.9604645e-08f,
                    2.9802322e-08f, 2.9802326e-08f, 1e-10f, INFINITY, -INFINITY, NAN})
        v.push_back(f);
    return v;
}

// Rows that make quantizers take every branch: gaussian, all zero, ties of |max| with opposite signs,
// values on rounding boundaries, a single spike.
std::vector<float> quantizer_input(int64_t n) {
    auto x = randn((size_t)n, 2, 1.5f);
    for (int64_t j = 0; j < 32 && j < n; ++j) x[(size_t)j] = 0.0f;  // an all-zero first block
    if (n >= 64)
        for (int64_t j = 32; j < 64; ++j) x[(size_t)j] = (j % 2 ? 1.0f : -1.0f) * (float)(j % 5);  // ties
    if (n >= 96)
        for (int64_t j = 64; j < 96; ++j) x[(size_t)j] = j == 70 ? 100.0f : 0.001f * (float)j;  // a spike
    return x;
}

const Type kDotTypes[] = {Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::Q8_0,  Type::Q2_K,
                          Type::Q3_K, Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::IQ4_NL};

// The order of warp_dot_blocks (vec_dot.cuh): 32 / kLanes blocks per step, each block's integer sums
// split over kLanes parts, the float terms added in block order.
template <Type T>
float emulate_warp_dot(const void* vx, const void* vy, int64_t n) {
    using Q = gc::QDot<T>;
    const auto* x = (const typename Q::Block*)vx;
    const auto* y = (const typename Q::Act*)vy;
    const int64_t nblocks = n / Q::kQK;
    constexpr int kGroups = 32 / Q::kLanes;
    float sum = 0.0f;
    for (int64_t ib0 = 0; ib0 < nblocks; ib0 += kGroups) {
        float t[kGroups] = {};
        for (int g = 0; g < kGroups && ib0 + g < nblocks; ++g) {
            int isum = 0, imins = 0;
            for (int part = Q::kLanes - 1; part >= 0; --part) {  // any order: integer sums
                int is = 0, im = 0;
                Q::partial(x[ib0 + g], y[ib0 + g], part, is, im);
                isum += is;
                imins += im;
            }
            t[g] = Q::term(x[ib0 + g], y[ib0 + g], isum, imins);
        }
        for (int g = 0; g < kGroups && ib0 + g < nblocks; ++g) sum = sum + t[g];
    }
    return sum;
}

float emulate(Type t, const void* x, const void* y, int64_t n) {
    switch (t) {
        case Type::Q4_0:
            return emulate_warp_dot<Type::Q4_0>(x, y, n);
        case Type::Q4_1:
            return emulate_warp_dot<Type::Q4_1>(x, y, n);
        case Type::Q5_0:
            return emulate_warp_dot<Type::Q5_0>(x, y, n);
        case Type::Q5_1:
            return emulate_warp_dot<Type::Q5_1>(x, y, n);
        case Type::Q8_0:
            return emulate_warp_dot<Type::Q8_0>(x, y, n);
        case Type::Q2_K:
            return emulate_warp_dot<Type::Q2_K>(x, y, n);
        case Type::Q3_K:
            return emulate_warp_dot<Type::Q3_K>(x, y, n);
        case Type::Q4_K:
            return emulate_warp_dot<Type::Q4_K>(x, y, n);
        case Type::Q5_K:
            return emulate_warp_dot<Type::Q5_K>(x, y, n);
        case Type::Q6_K:
            return emulate_warp_dot<Type::Q6_K>(x, y, n);
        case Type::IQ4_NL:
            return emulate_warp_dot<Type::IQ4_NL>(x, y, n);
        default:
            FAIL("no block dot for " << type_name(t));
            return 0;
    }
}

}  // namespace

TEST_CASE("device half and bfloat16 conversions equal the CPU's bit for bit", "[cuda][numerics]") {
    for (uint32_t h = 0; h < 65536; ++h) {
        REQUIRE(bits(gc::h2f((uint16_t)h)) == bits(fp16_to_fp32((uint16_t)h)));
        REQUIRE(bits(gc::bf2f((uint16_t)h)) == bits(bf16_to_fp32((uint16_t)h)));
    }
    for (float f : tricky_floats()) {
        INFO("bits " << bits(f));
        REQUIRE(gc::f2h(f) == fp32_to_fp16(f));
        REQUIRE(gc::f2bf(f) == fp32_to_bf16(f));
    }
}

TEST_CASE("device dequantization equals the CPU's to_float for every type", "[cuda][numerics]") {
    for (Type t :
         {Type::F16, Type::BF16, Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::Q8_0, Type::Q8_1,
          Type::Q2_K, Type::Q3_K, Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::Q8_K, Type::IQ4_NL}) {
        INFO("type " << type_name(t));
        const int64_t n = 1024;
        const Bytes row = to_type(t, quantizer_input(n), n);
        std::vector<float> ref((size_t)n);
        type_traits(t).to_float(row.data(), ref.data(), n);
        for (int64_t j = 0; j < n; ++j)
            REQUIRE(bits(gc::dequantize(t, (const char*)row.data(), j)) == bits(ref[(size_t)j]));
    }
}

TEST_CASE("device quantizers write the CPU reference quantizers' bytes", "[cuda][numerics]") {
    for (Type t : {Type::F16, Type::BF16, Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::Q8_0,
                   Type::Q8_1, Type::Q8_K, Type::IQ4_NL}) {
        INFO("type " << type_name(t));
        const int64_t n = 2048, bs = block_size(t);
        for (uint32_t seed : {3u, 4u}) {
            auto x = quantizer_input(n);
            if (seed == 4)
                for (auto& v : x) v = std::round(v * 4.0f) / 4.0f;  // many values exactly on rounding steps
            const Bytes ref = to_type(t, x, n);
            Bytes got(ref.size(), 0xAB);
            for (int64_t ib = 0; ib < n / bs; ++ib)
                REQUIRE(gc::quantize_block(t, x.data() + ib * bs, (char*)got.data(), ib));
            REQUIRE(got == ref);
        }
    }
}

TEST_CASE("device block dot products equal the CPU reference bit for bit", "[cuda][numerics]") {
    for (Type t : kDotTypes) {
        const Type vdt = type_traits(t).vec_dot_type;
        for (int64_t n : {block_size(t), 7 * block_size(t), 33 * block_size(t), 70 * block_size(t)}) {
            INFO("type " << type_name(t) << " n " << n);
            const Bytes w = to_type(t, randn((size_t)n, 5), n);
            const Bytes a = to_type(vdt, randn((size_t)n, 6, 3.0f), n);
            float ref;
            type_traits(t).vec_dot_ref(n, &ref, w.data(), a.data());
            REQUIRE(bits(emulate(t, w.data(), a.data(), n)) == bits(ref));
        }
    }
}

TEST_CASE("the exact sum does not depend on order and matches a careful sum", "[cuda][numerics]") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (int n : {1, 5, 100, 4096}) {
        std::vector<float> e((size_t)n);
        for (auto& v : e) {
            v = u(rng);
            if (rng() % 4 == 0) v = std::ldexp(v, -(int)(rng() % 60));  // small ones
        }
        e[0] = 1.0f;  // the maximum's numerator
        gc::ExactSum a;
        for (float v : e) a.add(v);
        std::shuffle(e.begin(), e.end(), rng);
        gc::ExactSum b;  // shuffled, and merged from two halves
        gc::ExactSum b2;
        for (size_t i = 0; i < e.size(); ++i) (i % 2 ? b : b2).add(e[i]);
        b.merge(b2.lo, b2.hi);
        REQUIRE(a.lo == b.lo);
        REQUIRE(a.hi == b.hi);
        long double ref = 0;
        for (float v : e) ref += (long double)v;
        REQUIRE(std::fabs((double)(a.value() - ref)) <= 1e-15 * (double)ref);
    }
    gc::ExactSum s;
    for (int i = 0; i < 1000; ++i) s.add(1.0f);
    s.add(0.5f);
    s.add(std::ldexp(1.0f, -70));
    s.add(0.0f);
    REQUIRE(s.value() == 1000.5 + std::ldexp(1.0, -70));
}

// The device's exp takes glibc's expf steps (expf_steps.h), so it equals the CPU's std::exp bit for bit:
// every 61st float bit pattern of both signs (the main range, subnormal results, overflow, inf, nan).
TEST_CASE("device exp equals the CPU's expf bit for bit", "[cuda][numerics]") {
    uint64_t checked = 0, differ = 0;
    for (uint64_t u = 0; u <= 0xffffffffu; u += 61) {
        const float x = gc::as_float((uint32_t)u);
        const float a = gc::exp_f32(x), b = std::exp(x);
        const bool same = std::isnan(b) ? std::isnan(a) : bits(a) == bits(b);
        if (!same && ++differ <= 5) FAIL_CHECK("exp(" << x << "): device " << a << ", CPU " << b);
        ++checked;
    }
    REQUIRE(differ == 0);
    REQUIRE(checked > 70000000);
    for (float x : {-INFINITY, INFINITY, 0.0f, -0.0f, 88.0f, -88.0f, 88.72283f, 88.72284f, -103.97207f,
                    -103.97208f, -87.33655f, -100.0f})
        REQUIRE(bits(gc::exp_f32(x)) == bits(std::exp(x)));
}

// tanh takes glibc's tanhf steps (tanh.h): every 13th float bit pattern of both signs, and every value
// within 2^12 ulps of each branch point of tanhf and expm1f (2^-55, the reductions' bounds, k = 23 and 56,
// 1, 22).
TEST_CASE("device tanh equals the CPU's tanhf bit for bit", "[cuda][numerics]") {
    uint64_t checked = 0, differ = 0;
    auto check = [&](float x) {
        const float a = gc::tanh_f32(x), b = std::tanh(x);
        const bool same = std::isnan(b) ? std::isnan(a) : bits(a) == bits(b);
        if (!same && ++differ <= 5) FAIL_CHECK("tanh(" << x << "): device " << a << ", CPU " << b);
        ++checked;
    };
    for (uint64_t u = 0; u <= 0xffffffffu; u += 13) check(gc::as_float((uint32_t)u));
    for (float edge : {0x1p-55f, 0.1732868f, 0.5198603f, 1.0f, 7.97f, 19.41f, 22.0f}) {
        for (int64_t d = -4096; d <= 4096; ++d) {
            const float x = gc::as_float((uint32_t)((int64_t)bits(edge) + d));
            check(x);
            check(-x);
        }
    }
    REQUIRE(differ == 0);
    REQUIRE(checked > 330000000);
    for (float x : {-INFINITY, INFINITY, 0.0f, -0.0f, NAN}) check(x);
    REQUIRE(differ == 0);
}

// GELU computes the f16 table entry the CPU looks up: every f16 value, and random floats around the
// clamps at -10 and 10, against the CPU's op.
TEST_CASE("device gelu equals the CPU's gelu op bit for bit", "[cuda][numerics]") {
    std::vector<float> x;
    for (uint32_t h = 0; h < 65536; ++h) x.push_back(gc::h2f((uint16_t)h));
    auto r = randn(20000, 40, 6.0f);
    x.insert(x.end(), r.begin(), r.end());
    for (float f :
         {-10.0f, 10.0f, std::nextafter(-10.0f, 0.0f), std::nextafter(10.0f, 0.0f), 65504.0f, 1e30f})
        x.push_back(f);
    const int64_t n = (int64_t)x.size();
    const auto ref = floats_of(run_cpu([&](Inputs& in) { return gelu(in.ctx, in.f32({n}, x)); }));
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i) {
        const float a = gc::gelu_f32(x[(size_t)i]), b = ref[(size_t)i];
        const bool same = std::isnan(b) ? std::isnan(a) : bits(a) == bits(b);
        if (!same && ++differ <= 5) FAIL_CHECK("gelu(" << x[(size_t)i] << "): device " << a << ", CPU " << b);
    }
    REQUIRE(differ == 0);
}

// norm's float steps after the CPU's sequential sums (the kernel adds in that order): the same bytes as
// the CPU's op, contiguous and through a strided view, at ragged lengths and with a large offset.
TEST_CASE("device norm arithmetic equals the CPU's norm op bit for bit", "[cuda][numerics]") {
    for (int64_t ne0 : {1, 2, 33, 768, 4097}) {
        INFO("ne0 " << ne0);
        auto x = randn((size_t)(ne0 * 3), 41, 2.0f);
        for (int64_t i = 0; i < ne0; ++i) x[(size_t)(2 * ne0 + i)] += 1000.0f;  // a row far from zero
        const auto ref = floats_of(run_cpu([&](Inputs& in) {
            return norm(in.ctx, in.f32({ne0, 3}, x), 1e-5f);
        }));
        std::vector<float> y((size_t)(ne0 * 3));
        for (int64_t r = 0; r < 3; ++r) gc::norm_row(x.data() + r * ne0, 1, ne0, 1e-5f, y.data() + r * ne0);
        REQUIRE(bytes_of(y) == bytes_of(ref));
        // Columns of the transposed matrix: a row stride of ne0 floats.
        const auto ref_t = floats_of(run_cpu([&](Inputs& in) {
            return norm(in.ctx, transpose(in.ctx, in.f32({ne0, 3}, x)), 1e-12f);
        }));
        std::vector<float> yt((size_t)(ne0 * 3));
        for (int64_t c = 0; c < ne0; ++c) gc::norm_row(x.data() + c, ne0, 3, 1e-12f, yt.data() + c * 3);
        REQUIRE(bytes_of(yt) == bytes_of(ref_t));
    }
}

// top_k by rank (each element placed at the count of elements before it) gives the CPU's lists: rows full
// of ties (both zeros among them), random rows, k from 1 to the row length.
TEST_CASE("device top_k order equals the CPU's top_k", "[cuda][numerics]") {
    std::mt19937 rng(42);
    const float levels[] = {-1.0f, 0.0f, -0.0f, 0.5f, 2.0f, -INFINITY, INFINITY};
    for (int64_t n : {1, 7, 64, 257}) {
        for (bool ties : {true, false}) {
            std::vector<float> x((size_t)(n * 4));
            const auto g = randn(x.size(), 43);
            for (size_t i = 0; i < x.size(); ++i) x[i] = ties ? levels[rng() % 7] : g[i];
            for (int64_t k : {int64_t(1), std::min<int64_t>(n, 8), n}) {
                INFO("n " << n << " k " << k << (ties ? " with ties" : ""));
                const Bytes ref = run_cpu([&](Inputs& in) {
                    return top_k(in.ctx, in.f32({n, 4}, x), (int)k);
                });
                std::vector<int32_t> got((size_t)(k * 4), -1);
                for (int64_t r = 0; r < 4; ++r) {
                    const float* row = x.data() + r * n;
                    for (int64_t i = 0; i < n; ++i) {
                        const int64_t rank = gc::topk_rank([&](int64_t j) { return row[j]; }, n, i);
                        if (rank < k) got[(size_t)(r * k + rank)] = (int32_t)i;
                    }
                }
                REQUIRE(bytes_of(got) == ref);
            }
        }
    }
}

// RoPE's angles (frequency factors, YaRN's ramp, the attention factor) in the CPU's steps: rotating pairs
// (1, 0) gives (cos, sin) times the magnitude scale, so the CPU's op shows its values. cos and sin are
// correctly rounded on the device and within 0.56 ulp in glibc: every value within two ulps (an ulp of cos or
// sin, rounded again by the scale), nearly all equal.
TEST_CASE("device rope angles and rotations equal the CPU's within two ulps", "[cuda][numerics]") {
    struct Case {
        bool ff;
        float freq_base, freq_scale, ext_factor, attn_factor;
        int n_ctx_orig;
    };
    const int n_dims = 128, head_dim = 128, n_tok = 6;
    const std::vector<int32_t> pos = {0, 1, 17, 4095, 32768, 131071};
    const Case cases[] = {{false, 10000.0f, 1.0f, 0.0f, 1.0f, 0},
                          {true, 500000.0f, 1.0f, 0.0f, 1.0f, 0},
                          {false, 10000.0f, 0.25f, 1.0f, 1.0f, 4096},
                          {true, 1000000.0f, 0.125f, 1.0f, 0.8f, 8192},
                          {false, 10000.0f, 0.5f, 0.0f, 1.25f, 0}};
    std::vector<float> ffs((size_t)n_dims / 2);
    for (int i = 0; i < n_dims / 2; ++i)
        ffs[(size_t)i] = i < 20 ? 1.0f : i < 40 ? 1.0f + 0.15f * (float)(i - 20) : 8.0f;
    std::vector<float> x((size_t)(head_dim * n_tok));
    for (size_t i = 0; i < x.size(); i += 2) x[i] = 1.0f;
    int64_t values = 0, equal = 0;
    for (const Case& c : cases) {
        RopeParams rp;
        rp.n_dims = n_dims;
        rp.mode = kRopeNormal;
        rp.n_ctx_orig = c.n_ctx_orig;
        rp.freq_base = c.freq_base;
        rp.freq_scale = c.freq_scale;
        rp.ext_factor = c.ext_factor;
        rp.attn_factor = c.attn_factor;
        const auto ref = floats_of(run_cpu([&](Inputs& in) {
            return rope_ext(in.ctx, in.f32({head_dim, 1, n_tok}, x), in.i32({n_tok}, pos),
                            c.ff ? in.f32({n_dims / 2}, ffs) : nullptr, rp);
        }));
        // rope.cu's host constants, with the CPU's calls.
        float corr[2] = {0.0f, 0.0f};
        if (c.ext_factor != 0.0f) rope_yarn_corr_dims(n_dims, c.n_ctx_orig, c.freq_base, 32.0f, 1.0f, corr);
        gc::RopeFreqs f{};
        f.theta_scale = std::pow(c.freq_base, -2.0f / (float)n_dims);
        f.freq_scale = c.freq_scale;
        f.ext_factor = c.ext_factor;
        f.corr0 = corr[0];
        f.corr1 = corr[1];
        f.mscale = c.ext_factor != 0.0f ? c.attn_factor * (1.0f + 0.1f * std::log(1.0f / c.freq_scale))
                                        : c.attn_factor;
        for (int t = 0; t < n_tok; ++t) {
            for (int p = 0; p < n_dims / 2; ++p) {
                float cs[2], y[2];
                gc::rope_cos_sin(gc::rope_angle(pos[(size_t)t], p, f, c.ff ? ffs.data() : nullptr), f.mscale,
                                 &cs[0], &cs[1]);
                gc::rope_rotate(1.0f, 0.0f, cs[0], cs[1], &y[0], &y[1]);
                for (int j = 0; j < 2; ++j) {
                    const float want = ref[(size_t)(t * head_dim + 2 * p + j)];
                    INFO("pos " << pos[(size_t)t] << " pair " << p << " device " << y[j] << " CPU " << want);
                    const float ulp = std::max(std::nextafter(want, INFINITY) - want,
                                               want - std::nextafter(want, -INFINITY));
                    REQUIRE(std::fabs(y[j] - want) <= 2.0f * ulp);
                    ++values;
                    equal += bits(y[j]) == bits(want);
                }
            }
        }
    }
    INFO(equal << " of " << values << " values equal");
    REQUIRE(equal >= values * 99 / 100);
}
