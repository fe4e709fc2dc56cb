// Attention on CUDA: flash_attn with f16 and q8_0 (and the other cache types) K/V, GQA and masks, against
// the CPU reference level (the same bytes); the fused and unfused paths agreeing; and a sequence's result
// not depending on where its cells sit among other sequences' (masked) cells.
#include "cuda_test_util.h"

using namespace cuda_test;

namespace {

struct Attn {
    int64_t hd, n_kv, hkv, n_q, h;
};

// Cache-shaped K and V ([hd * hkv, n_kv] rows, viewed per head), Q permuted as the model graph does.
struct AttnData {
    std::vector<float> q, k, v, mask;
};

AttnData make_data(const Attn& a, uint32_t seed, bool ragged_mask) {
    AttnData d;
    d.q = randn((size_t)(a.hd * a.h * a.n_q), seed);
    d.k = randn((size_t)(a.hd * a.hkv * a.n_kv), seed + 1);
    d.v = randn((size_t)(a.hd * a.hkv * a.n_kv), seed + 2);
    d.mask.assign((size_t)(a.n_kv * a.n_q), 0.0f);
    std::mt19937 rng(seed + 3);
    for (int64_t t = 0; t < a.n_q; ++t)
        for (int64_t j = 0; j < a.n_kv; ++j)
            if (ragged_mask && (rng() % 4 == 0 || j > a.n_kv - a.n_q + t))
                d.mask[(size_t)(t * a.n_kv + j)] = -INFINITY;
    return d;
}

Tensor* cache_view(Inputs& in, Type t, const Attn& a, const std::vector<float>& x) {
    Tensor* c = in.add(t, {a.hd * a.hkv, a.n_kv}, to_type(t, x, a.hd * a.hkv));
    return view_3d(in.ctx, c, a.hd, a.n_kv, a.hkv, c->nb[1], row_size(t, a.hd), 0);
}

Build fused(const Attn& a, const AttnData& d, Type kt, Type vt) {
    return [=, &d](Inputs& in) {
        Tensor* Q = permute(in.ctx, in.f32({a.hd, a.h, a.n_q}, d.q), 0, 2, 1, 3);
        return flash_attn(in.ctx, Q, cache_view(in, kt, a, d.k), cache_view(in, vt, a, d.v),
                          in.f32({a.n_kv, a.n_q}, d.mask), 1.0f / std::sqrt((float)a.hd));
    };
}

Build unfused(const Attn& a, const AttnData& d, Type kt, Type vt) {
    return [=, &d](Inputs& in) {
        Tensor* Q = permute(in.ctx, in.f32({a.hd, a.h, a.n_q}, d.q), 0, 2, 1, 3);
        Tensor* kq = soft_max(in.ctx, mul_mat(in.ctx, cache_view(in, kt, a, d.k), Q),
                              in.f32({a.n_kv, a.n_q}, d.mask), 1.0f / std::sqrt((float)a.hd));
        return cont(in.ctx, permute(in.ctx, mul_mat_t(in.ctx, cache_view(in, vt, a, d.v), kq), 0, 2, 1, 3));
    };
}

const Attn kShapes[] = {
    {64, 32, 2, 1, 8}, {64, 100, 4, 7, 8}, {128, 256, 1, 3, 4}, {64, 1, 1, 1, 1}, {128, 33, 8, 2, 8}};

}  // namespace

TEST_CASE("CUDA flash_attn with f16 and q8_0 K/V, GQA and masks, equals the CPU reference",
          "[cuda][flash_attn]") {
    for (const Attn& a : kShapes) {
        for (auto [kt, vt] : {std::pair{Type::F16, Type::F16},
                              {Type::Q8_0, Type::Q8_0},
                              {Type::Q8_0, Type::F16},
                              {Type::F16, Type::Q8_0}}) {
            INFO("hd " << a.hd << " n_kv " << a.n_kv << " hkv " << a.hkv << " n_q " << a.n_q << " h " << a.h
                       << " K " << type_name(kt) << " V " << type_name(vt));
            const AttnData d = make_data(a, 40, true);
            check_identical_to_reference(fused(a, d, kt, vt));
        }
    }
}

TEST_CASE("CUDA flash_attn with the other cache types", "[cuda][flash_attn]") {
    const Attn a{64, 50, 2, 3, 4};
    const AttnData d = make_data(a, 50, true);
    for (Type t : {Type::F32, Type::BF16, Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::IQ4_NL}) {
        INFO("K/V type " << type_name(t));
        check_identical_to_reference(fused(a, d, t, t));
    }
}

TEST_CASE("CUDA unfused attention (mul_mat, soft_max, mul_mat_t) equals the CPU reference and the fused path",
          "[cuda][flash_attn]") {
    Backend& cuda = cuda_backend();
    for (const Attn& a : kShapes) {
        INFO("hd " << a.hd << " n_kv " << a.n_kv << " n_q " << a.n_q);
        const AttnData d = make_data(a, 60, true);
        check_identical_to_reference(unfused(a, d, Type::F16, Type::F16));
        // Same steps, same bits (as on the CPU).
        REQUIRE(run_cuda(unfused(a, d, Type::F16, Type::F16), cuda) ==
                run_cuda(fused(a, d, Type::F16, Type::F16), cuda));
    }
}

// Soft-capping (gemma2): cap * tanh(scale * s / cap) with glibc's tanhf steps (tanh.h), the same bytes as
// the CPU reference; with scale 1 the fused path equals the unfused softcap + soft_max on the GPU too.
TEST_CASE("CUDA flash_attn with soft-capping equals the CPU reference and the unfused soft-cap",
          "[cuda][flash_attn]") {
    Backend& cuda = cuda_backend();
    for (const Attn& a : kShapes) {
        const AttnData d = make_data(a, 70, true);
        for (auto [kt, vt] : {std::pair{Type::F16, Type::F16}, {Type::Q8_0, Type::Q8_0}}) {
            INFO("hd " << a.hd << " n_kv " << a.n_kv << " n_q " << a.n_q << " K " << type_name(kt));
            for (float scale : {1.0f, 1.0f / std::sqrt((float)a.hd)}) {
                const Build capped = [&, kt = kt, vt = vt](Inputs& in) {
                    Tensor* Q = permute(in.ctx, in.f32({a.hd, a.h, a.n_q}, d.q), 0, 2, 1, 3);
                    return flash_attn(in.ctx, Q, cache_view(in, kt, a, d.k), cache_view(in, vt, a, d.v),
                                      in.f32({a.n_kv, a.n_q}, d.mask), scale, 5.0f);
                };
                check_identical_to_reference(capped);
                if (scale != 1.0f || kt != Type::F16) continue;
                const Build unfused_capped = [&](Inputs& in) {
                    Tensor* Q = permute(in.ctx, in.f32({a.hd, a.h, a.n_q}, d.q), 0, 2, 1, 3);
                    Tensor* kq = softcap(in.ctx, mul_mat(in.ctx, cache_view(in, Type::F16, a, d.k), Q), 5.0f);
                    kq = soft_max(in.ctx, kq, in.f32({a.n_kv, a.n_q}, d.mask), 1.0f);
                    return cont(in.ctx,
                                permute(in.ctx, mul_mat_t(in.ctx, cache_view(in, Type::F16, a, d.v), kq), 0,
                                        2, 1, 3));
                };
                REQUIRE(run_cuda(unfused_capped, cuda) == run_cuda(capped, cuda));
            }
        }
    }
}

TEST_CASE("CUDA attention of a sequence does not depend on other sequences' cells",
          "[cuda][flash_attn][invariance]") {
    Backend& cuda = cuda_backend();
    const int64_t hd = 64, hkv = 2, h = 4, n_q = 2, mine = 5;
    const auto q = randn((size_t)(hd * h * n_q), 70);
    const auto my_k = randn((size_t)(hd * hkv * mine), 71), my_v = randn((size_t)(hd * hkv * mine), 72);
    // Our cells at `where` in a cache of n_kv cells, every other cell random and masked.
    auto layout = [&](int64_t n_kv, std::vector<int64_t> where, uint32_t seed) {
        AttnData d;
        d.q = q;
        d.k = randn((size_t)(hd * hkv * n_kv), seed);
        d.v = randn((size_t)(hd * hkv * n_kv), seed + 1);
        d.mask.assign((size_t)(n_kv * n_q), -INFINITY);
        for (size_t c = 0; c < where.size(); ++c) {
            const int64_t cell = where[c];
            std::copy_n(my_k.begin() + (int64_t)c * hd * hkv, hd * hkv, d.k.begin() + cell * hd * hkv);
            std::copy_n(my_v.begin() + (int64_t)c * hd * hkv, hd * hkv, d.v.begin() + cell * hd * hkv);
            for (int64_t t = 0; t < n_q; ++t) d.mask[(size_t)(t * n_kv + cell)] = 0.0f;
        }
        return d;
    };
    const AttnData alone = layout(8, {0, 1, 2, 3, 4}, 80);
    const AttnData crowded = layout(40, {1, 3, 6, 7, 31}, 90);
    const Attn a_alone{hd, 8, hkv, n_q, h}, a_crowded{hd, 40, hkv, n_q, h};
    for (auto [kt, vt] : {std::pair{Type::F16, Type::F16}, {Type::Q8_0, Type::Q8_0}}) {
        INFO("K " << type_name(kt) << " V " << type_name(vt));
        REQUIRE(run_cuda(fused(a_alone, alone, kt, vt), cuda) ==
                run_cuda(fused(a_crowded, crowded, kt, vt), cuda));
    }
    REQUIRE(run_cuda(unfused(a_alone, alone, Type::F16, Type::F16), cuda) ==
            run_cuda(unfused(a_crowded, crowded, Type::F16, Type::F16), cuda));
}

TEST_CASE("CUDA attention with a mask plane per head (ALiBi) equals the CPU reference, fused and unfused",
          "[cuda][flash_attn]") {
    const Attn a{64, 40, 2, 5, 6};
    AttnData d = make_data(a, 60, true);
    // One plane per head: the ragged mask plus head-dependent biases (ALiBi's slope_h * -|i - j|).
    std::vector<float> planes((size_t)(a.n_kv * a.n_q * a.h));
    for (int64_t h = 0; h < a.h; ++h)
        for (int64_t t = 0; t < a.n_q; ++t)
            for (int64_t j = 0; j < a.n_kv; ++j) {
                const float m = d.mask[(size_t)(t * a.n_kv + j)];
                planes[(size_t)((h * a.n_q + t) * a.n_kv + j)] =
                    m == -INFINITY ? m : -0.5f / (float)(h + 1) * (float)std::abs(j - t);
            }
    const float scale = 1.0f / std::sqrt((float)a.hd);
    const auto q_of = [&](Inputs& in) {
        return permute(in.ctx, in.f32({a.hd, a.h, a.n_q}, d.q), 0, 2, 1, 3);
    };
    check_identical_to_reference([&](Inputs& in) {
        return flash_attn(in.ctx, q_of(in), cache_view(in, Type::F16, a, d.k),
                          cache_view(in, Type::F16, a, d.v), in.f32({a.n_kv, a.n_q, a.h}, planes), scale);
    });
    check_identical_to_reference([&](Inputs& in) {
        Tensor* kq = soft_max(in.ctx, mul_mat(in.ctx, cache_view(in, Type::F16, a, d.k), q_of(in)),
                              in.f32({a.n_kv, a.n_q, a.h}, planes), scale);
        return cont(in.ctx,
                    permute(in.ctx, mul_mat_t(in.ctx, cache_view(in, Type::F16, a, d.v), kq), 0, 2, 1, 3));
    });
}
