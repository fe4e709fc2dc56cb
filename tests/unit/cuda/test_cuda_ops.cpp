// Each op on CUDA against the CPU backend on random inputs, at several shapes including ragged ones. Ops
// whose CPU arithmetic is plain float steps must give the same bytes; those that call exp, cos or sin
// agree within a few ulps (glibc and CUDA round those functions differently in rare cases).
#include "cuda_test_util.h"

using namespace cuda_test;

namespace {

const Type kAllTypes[] = {Type::F32,  Type::F16,  Type::BF16, Type::Q4_0,  Type::Q4_1,
                          Type::Q5_0, Type::Q5_1, Type::Q8_0, Type::Q2_K,  Type::Q3_K,
                          Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::IQ4_NL};
const Type kCacheTypes[] = {Type::F32,  Type::F16,  Type::BF16, Type::Q8_0,  Type::Q4_0,
                            Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::IQ4_NL};

}  // namespace

TEST_CASE("CUDA add and mul broadcast like the CPU", "[cuda][elementwise]") {
    struct Shape {
        std::vector<int64_t> a, b;
    };
    for (const Shape& s : {Shape{{33, 5, 3, 2}, {33, 5, 3, 2}}, Shape{{33, 5, 3, 2}, {33, 1, 1, 1}},
                           Shape{{64, 7, 4, 1}, {1, 7, 1, 1}}, Shape{{4097, 3, 1, 1}, {4097, 1, 1, 1}},
                           Shape{{16, 6, 4, 2}, {8, 3, 2, 1}}}) {
        const size_t na = (size_t)(s.a[0] * s.a[1] * s.a[2] * s.a[3]),
                     nb = (size_t)(s.b[0] * s.b[1] * s.b[2] * s.b[3]);
        const auto a = randn(na, 1), b = randn(nb, 2);
        for (auto op : {add, mul}) {
            check_identical([&](Inputs& in) { return op(in.ctx, in.f32(s.a, a), in.f32(s.b, b)); });
        }
    }
}

// e^x takes the C library's steps on both (expf_steps.h): the same bytes.
TEST_CASE("CUDA scale, silu, swiglu", "[cuda][elementwise]") {
    for (int64_t ne0 : {1, 31, 256, 1000}) {
        const auto a = randn((size_t)ne0 * 3, 3, 4.0f), b = randn((size_t)ne0 * 3, 4);
        check_identical([&](Inputs& in) { return scale(in.ctx, in.f32({ne0, 3}, a), 0.125f); });
        check_identical([&](Inputs& in) { return silu(in.ctx, in.f32({ne0, 3}, a)); });
        check_identical([&](Inputs& in) { return swiglu(in.ctx, in.f32({ne0, 3}, a), in.f32({ne0, 3}, b)); });
    }
    // Through a permuted (strided) view.
    const auto a = randn(8 * 5 * 3, 5);
    check_identical([&](Inputs& in) {
        return silu(in.ctx, permute(in.ctx, in.f32({8, 5, 3}, a), 1, 0, 2, 3));
    });
}

TEST_CASE("CUDA rms_norm at ragged row lengths", "[cuda][rms_norm]") {
    for (int64_t ne0 : {1, 33, 64, 2048, 4097}) {
        const auto a = randn((size_t)ne0 * 7, 6, 3.0f);
        check_close([&](Inputs& in) { return rms_norm(in.ctx, in.f32({ne0, 7}, a), 1e-5f); }, kUlpTol);
    }
}

TEST_CASE("CUDA rope, normal and neox, full and partial rotation", "[cuda][rope]") {
    struct Case {
        int64_t head_dim, n_head, n_tok;
        int n_dims;
    };
    for (const Case& c : {Case{64, 4, 5, 64}, Case{128, 2, 3, 64}, Case{16, 3, 37, 16}, Case{80, 2, 2, 32}}) {
        for (int mode : {kRopeNormal, kRopeNeox}) {
            const auto x = randn((size_t)(c.head_dim * c.n_head * c.n_tok), 7);
            std::vector<int32_t> pos((size_t)c.n_tok);
            for (int64_t i = 0; i < c.n_tok; ++i) pos[(size_t)i] = (int32_t)(i * 97 % 3001);
            check_close(
                [&](Inputs& in) {
                    return rope(in.ctx, in.f32({c.head_dim, c.n_head, c.n_tok}, x), in.i32({c.n_tok}, pos),
                                c.n_dims, mode, 10000.0f, 1.0f);
                },
                kUlpTol);
        }
    }
    // Scaled frequencies and another base.
    const auto x = randn(64 * 2 * 4, 8);
    const std::vector<int32_t> pos = {0, 1, 4095, 70000};
    check_close(
        [&](Inputs& in) {
            return rope(in.ctx, in.f32({64, 2, 4}, x), in.i32({4}, pos), 64, kRopeNeox, 500000.0f, 0.25f);
        },
        kUlpTol);
}

// Exact denominators and e^x with the C library's steps: the same bytes as the CPU.
TEST_CASE("CUDA soft_max with scale and F32/F16 masks, broadcast over heads", "[cuda][soft_max]") {
    for (int64_t n_kv : {1, 32, 100, 4096}) {
        const int64_t n_q = 5, n_head = 3;
        const auto a = randn((size_t)(n_kv * n_q * n_head), 9, 3.0f);
        std::vector<float> mask((size_t)(n_kv * n_q));
        std::mt19937 rng(10);
        for (auto& m : mask) m = rng() % 3 == 0 ? -INFINITY : 0.0f;
        for (int64_t j = 0; j < n_kv; ++j) mask[(size_t)(2 * n_kv + j)] = -INFINITY;  // a fully masked row
        std::vector<float> mask_vals(mask);
        for (size_t i = 0; i < mask_vals.size(); ++i)
            if (mask_vals[i] == 0.0f) mask_vals[i] = (float)(i % 7) * -0.5f;  // finite biases too
        check_identical([&](Inputs& in) {
            return soft_max(in.ctx, in.f32({n_kv, n_q, n_head}, a), nullptr, 0.3f);
        });
        check_identical([&](Inputs& in) {
            return soft_max(in.ctx, in.f32({n_kv, n_q, n_head}, a), in.f32({n_kv, n_q}, mask_vals), 0.125f);
        });
        check_identical([&](Inputs& in) {
            Tensor* m = in.add(Type::F16, {n_kv, n_q}, to_type(Type::F16, mask, n_kv));
            return soft_max(in.ctx, in.f32({n_kv, n_q, n_head}, a), m, 1.0f);
        });
    }
}

TEST_CASE("CUDA get_rows dequantizes every weight type exactly as the CPU", "[cuda][get_rows]") {
    for (Type t : kAllTypes) {
        INFO("type " << type_name(t));
        const int64_t ne0 = 512, rows = 9;
        const auto w = randn((size_t)(ne0 * rows), 11);
        const std::vector<int32_t> ids = {8, 0, 3, 3, 7, 1};
        check_identical([&](Inputs& in) {
            return get_rows(in.ctx, in.add(t, {ne0, rows}, to_type(t, w, ne0)), in.i32({3, 2}, ids));
        });
    }
}

TEST_CASE("CUDA set_rows writes each cache type with the reference quantizers", "[cuda][set_rows]") {
    for (Type t : kCacheTypes) {
        for (Type id_type : {Type::I32, Type::I64}) {
            INFO("type " << type_name(t) << ", ids " << type_name(id_type));
            const int64_t ne0 = 96, cells = 12, n = 5;
            const auto cache = randn((size_t)(ne0 * cells), 12);
            const auto src = randn((size_t)(ne0 * n), 13, 2.0f);
            const std::vector<int64_t> ids = {11, 0, 4, 5, 9};
            Bytes id_bytes;
            if (id_type == Type::I64) {
                id_bytes = bytes_of(ids.data(), ids.size() * 8);
            } else {
                std::vector<int32_t> ids32(ids.begin(), ids.end());
                id_bytes = bytes_of(ids32);
            }
            check_identical([&](Inputs& in) {
                Tensor* dst = in.add(t, {ne0, cells}, to_type(t, cache, ne0));
                return set_rows(in.ctx, dst, in.f32({ne0, n}, src), in.add(id_type, {n}, id_bytes));
            });
        }
    }
}

TEST_CASE("CUDA cont and dup: strided copies and type conversions", "[cuda][copy]") {
    const auto a = randn(64 * 6 * 5, 14);
    // cont of permuted views (the attention output path), F32 and F16.
    check_identical([&](Inputs& in) {
        return cont(in.ctx, permute(in.ctx, in.f32({64, 6, 5}, a), 0, 2, 1, 3));
    });
    check_identical([&](Inputs& in) { return cont(in.ctx, transpose(in.ctx, in.f32({64, 30}, a))); });
    check_identical([&](Inputs& in) {
        Tensor* h = in.add(Type::F16, {64, 6, 5}, to_type(Type::F16, a, 64));
        return cont(in.ctx, permute(in.ctx, h, 0, 2, 1, 3));
    });
    // Conversions from F32, from F16 and from quantized rows.
    for (Type to :
         {Type::F16, Type::BF16, Type::Q8_0, Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::IQ4_NL}) {
        INFO("to " << type_name(to));
        check_identical([&](Inputs& in) { return dup(in.ctx, in.f32({64, 30}, a), to); });
        check_identical([&](Inputs& in) {
            return dup(in.ctx, permute(in.ctx, in.f32({64, 6, 5}, a), 0, 2, 1, 3), to);
        });
    }
    for (Type from : kAllTypes) {
        if (from == Type::F32) continue;
        INFO("from " << type_name(from));
        const auto w = randn(256 * 3, 15);
        check_identical([&](Inputs& in) {
            return dup(in.ctx, in.add(from, {256, 3}, to_type(from, w, 256)), Type::F32);
        });
    }
    const std::vector<int32_t> ints = {-5, 0, 7, 1 << 20};
    check_identical([&](Inputs& in) { return dup(in.ctx, in.i32({4}, ints), Type::F32); });
}
