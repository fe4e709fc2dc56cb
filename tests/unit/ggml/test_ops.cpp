// CPU ops against plain double-precision references on random data, at ragged shapes and thread counts.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ggml/backend.h"
#include "ggml/ggml.h"
#include "ops_test_util.h"

using namespace ggml;
using namespace ops_test;

TEST_CASE("mul_mat F32 matches a double reference at ragged shapes", "[ggml][mul_mat]") {
    for (auto [K, M, N] : {std::tuple{64, 7, 5}, {32, 1, 1}, {96, 13, 3}, {256, 33, 17}}) {
        for (int nth : {1, 3}) {
            Runner r;
            Context ctx;
            auto a = randn((size_t)K * M, 1), b = randn((size_t)K * N, 2);
            Tensor* out = mul_mat(ctx, input(ctx, a, {K, M}), input(ctx, b, {K, N}));
            r.run(out, nth);
            auto got = read(out);
            for (int n = 0; n < N; ++n)
                for (int m = 0; m < M; ++m) {
                    double ref = 0;
                    for (int k = 0; k < K; ++k) ref += (double)a[m * K + k] * b[n * K + k];
                    REQUIRE(got[n * M + m] == Approx(ref).margin(1e-4));
                }
        }
    }
}

TEST_CASE("mul_mat of quantized weights matches dequantized weights", "[ggml][mul_mat]") {
    const Type types[] = {Type::F16,  Type::BF16, Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1,  Type::Q8_0,
                          Type::Q2_K, Type::Q3_K, Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::IQ4_NL,
                          Type::IQ4_XS, Type::IQ3_XXS, Type::IQ3_S, Type::TQ1_0, Type::TQ2_0, Type::MXFP4};
    for (Type t : types) {
        INFO(type_name(t));
        const int64_t K = 512, M = 9, N = 4;
        Runner r;
        Context ctx;
        auto a = randn((size_t)K * M, 3), b = randn((size_t)K * N, 4);
        std::vector<uint8_t> qa;
        Tensor* wa = quantized(ctx, t, a, K, M, qa);
        std::vector<float> deq((size_t)K * M);
        for (int64_t m = 0; m < M; ++m)
            type_traits(t).to_float(qa.data() + m * wa->nb[1], deq.data() + m * K, K);
        // The activations go through the paired type: reproduce that rounding in the reference.
        const Type vdt = type_traits(t).vec_dot_type;
        std::vector<float> bq((size_t)K * N);
        std::vector<uint8_t> tmp(row_size(vdt, K));
        for (int64_t n = 0; n < N; ++n) {
            type_traits(vdt).from_float_ref(b.data() + n * K, tmp.data(), K);
            type_traits(vdt).to_float(tmp.data(), bq.data() + n * K, K);
        }
        Tensor* out = mul_mat(ctx, wa, input(ctx, b, {K, N}));
        r.run(out, 2);
        auto got = read(out);
        for (int n = 0; n < N; ++n)
            for (int m = 0; m < M; ++m) {
                double ref = 0, mag = 0;
                for (int k = 0; k < K; ++k) {
                    ref += (double)deq[m * K + k] * bq[n * K + k];
                    mag += std::fabs((double)deq[m * K + k] * bq[n * K + k]);
                }
                // Q8_1 stores d*sum(q) as f16 (part of the format), which rounds the min term.
                const double tol = vdt == Type::Q8_1 ? 2e-3 : 1e-5;
                REQUIRE(std::fabs(got[n * M + m] - ref) <= tol * mag + 1e-5);
            }
    }
}

TEST_CASE("a token's mul_mat output does not depend on the batch or the thread count", "[ggml][invariance]") {
    const int64_t K = 256, M = 37;
    for (Type t : {Type::F32, Type::F16, Type::Q8_0, Type::Q4_0, Type::Q4_K, Type::Q6_K}) {
        INFO(type_name(t));
        auto a = randn((size_t)K * M, 5), b = randn((size_t)K * 9, 6);
        std::vector<float> alone;
        {
            Runner r;
            Context ctx;
            std::vector<uint8_t> qa;
            Tensor* wa = t == Type::F32 ? input(ctx, a, {K, M}) : quantized(ctx, t, a, K, M, qa);
            std::vector<float> b1(b.begin() + 4 * K, b.begin() + 5 * K);
            Tensor* out = mul_mat(ctx, wa, input(ctx, b1, {K, 1}));
            r.run(out, 1);
            alone = read(out);
        }
        Runner r;
        Context ctx;
        std::vector<uint8_t> qa;
        Tensor* wa = t == Type::F32 ? input(ctx, a, {K, M}) : quantized(ctx, t, a, K, M, qa);
        Tensor* out = mul_mat(ctx, wa, input(ctx, b, {K, 9}));
        r.run(out, 3);
        auto batched = read(out);
        for (int m = 0; m < M; ++m) REQUIRE(batched[4 * M + m] == alone[m]);  // bitwise
    }
}

TEST_CASE("mat-vec products and small batches give the same bits on 1 to 4 threads", "[ggml][invariance]") {
    // Large enough that the graph runs on several threads: decode's guided row ranges (one column),
    // small batches whose activations each share quantizes itself, and a ragged row count.
    const int64_t K = 1024, M = 16381;
    const auto a = randn((size_t)K * M, 11);
    for (Type t : {Type::F32, Type::Q8_0, Type::Q4_0, Type::Q4_K}) {
        Context ctx;
        std::vector<uint8_t> qa;
        std::vector<float> a_copy = a;
        Tensor* wa = t == Type::F32 ? input(ctx, a_copy, {K, M}) : quantized(ctx, t, a, K, M, qa);
        for (int64_t n : {1, 3}) {
            INFO(type_name(t) << ", " << n << " columns");
            auto b = randn((size_t)K * n, 12 + (uint32_t)n);
            Tensor* out = mul_mat(ctx, wa, input(ctx, b, {K, n}));
            Runner r;
            std::vector<float> want;
            for (int nth : {1, 2, 3, 4}) {
                r.run(out, nth);
                const auto got = read(out);
                if (want.empty()) {
                    want = got;
                    continue;
                }
                int mismatches = 0;
                for (size_t i = 0; i < got.size(); ++i) mismatches += std::memcmp(&got[i], &want[i], 4) != 0;
                INFO(nth << " threads");
                CHECK(mismatches == 0);
            }
        }
    }
}

TEST_CASE("rms_norm, mul, add broadcast, scale, silu, swiglu", "[ggml][elementwise]") {
    Runner r;
    Context ctx;
    const int64_t n0 = 67, n1 = 5;
    auto x = randn(n0 * n1, 7), w = randn(n0, 8), y = randn(n0 * n1, 9);
    Tensor* tx = input(ctx, x, {n0, n1});
    Tensor* tw = input(ctx, w, {n0});
    Tensor* ty = input(ctx, y, {n0, n1});
    Tensor* norm = mul(ctx, rms_norm(ctx, tx, 1e-5f), tw);
    Tensor* out = add(ctx, scale(ctx, swiglu(ctx, norm, ty), 0.5f), silu(ctx, tx));
    r.run(out, 2);
    auto got = read(out);
    for (int64_t i1 = 0; i1 < n1; ++i1) {
        double ss = 0;
        for (int64_t i = 0; i < n0; ++i) ss += (double)x[i1 * n0 + i] * x[i1 * n0 + i];
        const double sc = 1.0 / std::sqrt(ss / n0 + 1e-5);
        for (int64_t i = 0; i < n0; ++i) {
            const double nv = x[i1 * n0 + i] * sc * w[i];
            const double sw = nv / (1 + std::exp(-nv)) * y[i1 * n0 + i];
            const double xs = x[i1 * n0 + i] / (1 + std::exp(-(double)x[i1 * n0 + i]));
            REQUIRE(got[i1 * n0 + i] == Approx(0.5 * sw + xs).margin(1e-5));
        }
    }
}

TEST_CASE("soft_max with scale and mask", "[ggml][soft_max]") {
    Runner r;
    Context ctx;
    const int64_t n0 = 45, n1 = 6, n2 = 3;
    auto x = randn(n0 * n1 * n2, 10);
    std::vector<float> m(n0 * n1);
    std::mt19937 rng(11);
    for (auto& v : m) v = rng() % 3 == 0 ? -std::numeric_limits<float>::infinity() : 0.0f;
    for (int64_t i1 = 0; i1 < n1; ++i1) m[i1 * n0] = 0.0f;  // at least one visible entry per row
    Tensor* out = soft_max(ctx, input(ctx, x, {n0, n1, n2}), input(ctx, m, {n0, n1}), 0.3f);
    r.run(out, 2);
    auto got = read(out);
    for (int64_t i2 = 0; i2 < n2; ++i2)
        for (int64_t i1 = 0; i1 < n1; ++i1) {
            const float* row = &x[(i2 * n1 + i1) * n0];
            double mx = -1e300, sum = 0;
            for (int64_t i = 0; i < n0; ++i)
                if (m[i1 * n0 + i] == 0) mx = std::max(mx, 0.3 * row[i]);
            for (int64_t i = 0; i < n0; ++i)
                if (m[i1 * n0 + i] == 0) sum += std::exp(0.3 * row[i] - mx);
            for (int64_t i = 0; i < n0; ++i) {
                const double ref = m[i1 * n0 + i] == 0 ? std::exp(0.3 * row[i] - mx) / sum : 0.0;
                REQUIRE(got[(i2 * n1 + i1) * n0 + i] == Approx(ref).margin(1e-6));
            }
        }
}

TEST_CASE("rope normal and neox modes rotate pairs by position", "[ggml][rope]") {
    for (int mode : {kRopeNormal, kRopeNeox}) {
        Runner r;
        Context ctx;
        const int64_t hd = 16, nh = 3, nt = 4;
        const int n_rot = 12;
        auto x = randn(hd * nh * nt, 12);
        std::vector<int32_t> pos = {0, 5, 17, 300};
        Tensor* tp = ctx.new_tensor_1d(Type::I32, nt);
        tp->data = pos.data();
        Tensor* out = rope(ctx, input(ctx, x, {hd, nh, nt}), tp, n_rot, mode, 10000.0f, 1.0f);
        r.run(out, 2);
        auto got = read(out);
        for (int64_t t = 0; t < nt; ++t)
            for (int64_t h = 0; h < nh; ++h) {
                const float* xr = &x[(t * nh + h) * hd];
                const float* yr = &got[(t * nh + h) * hd];
                for (int i = 0; i < n_rot / 2; ++i) {
                    const double theta = pos[t] * std::pow(10000.0, -2.0 * i / n_rot);
                    const int a = mode == kRopeNeox ? i : 2 * i,
                              b = mode == kRopeNeox ? i + n_rot / 2 : 2 * i + 1;
                    REQUIRE(yr[a] == Approx(xr[a] * std::cos(theta) - xr[b] * std::sin(theta)).margin(2e-4));
                    REQUIRE(yr[b] == Approx(xr[a] * std::sin(theta) + xr[b] * std::cos(theta)).margin(2e-4));
                }
                for (int64_t i = n_rot; i < hd; ++i) REQUIRE(yr[i] == xr[i]);
            }
    }
}

TEST_CASE("get_rows dequantizes, set_rows writes converted rows in place", "[ggml][rows]") {
    Runner r;
    Context ctx;
    const int64_t ne0 = 64, rows = 10;
    auto data = randn(ne0 * rows, 13);
    std::vector<uint8_t> q;
    Tensor* table = quantized(ctx, Type::Q8_0, data, ne0, rows, q);
    std::vector<int32_t> ids = {3, 0, 9, 3};
    Tensor* tid = ctx.new_tensor_1d(Type::I32, 4);
    tid->data = ids.data();
    Tensor* got_rows = get_rows(ctx, table, tid);
    got_rows->flags |= kFlagOutput;

    std::vector<uint16_t> cache(ne0 * 8, 0);
    Tensor* tc = ctx.new_tensor_2d(Type::F16, ne0, 8);
    tc->data = cache.data();
    auto src = randn(ne0 * 2, 14);
    std::vector<int32_t> cells = {6, 1};
    Tensor* tcell = ctx.new_tensor_1d(Type::I32, 2);
    tcell->data = cells.data();
    Tensor* written = set_rows(ctx, tc, input(ctx, src, {ne0, 2}), tcell);
    // both results in one graph
    Tensor* out = add(ctx, got_rows, got_rows);
    Graph g;
    g.build_forward(out);
    g.build_forward(written);
    r.alloc.allocate(g);
    r.backend->graph_compute(g);
    auto rows_out = read(got_rows);
    std::vector<float> deq(ne0);
    for (int i = 0; i < 4; ++i) {
        type_traits(Type::Q8_0).to_float(q.data() + ids[i] * table->nb[1], deq.data(), ne0);
        for (int64_t k = 0; k < ne0; ++k) REQUIRE(rows_out[i * ne0 + k] == deq[k]);
    }
    for (int64_t k = 0; k < ne0; ++k) {
        REQUIRE(cache[6 * ne0 + k] == fp32_to_fp16(src[k]));
        REQUIRE(cache[1 * ne0 + k] == fp32_to_fp16(src[ne0 + k]));
        REQUIRE(cache[0 * ne0 + k] == 0);
    }
}

TEST_CASE("cont of a permuted view and dup to f16", "[ggml][copy]") {
    Runner r;
    Context ctx;
    auto x = randn(4 * 3 * 5, 15);
    Tensor* t = input(ctx, x, {4, 3, 5});
    Tensor* p = cont(ctx, permute(ctx, t, 0, 2, 1, 3));  // [4, 5, 3]
    Tensor* h = dup(ctx, p, Type::F16);
    r.run(h, 2);
    auto got = read(p);
    for (int i2 = 0; i2 < 3; ++i2)
        for (int i1 = 0; i1 < 5; ++i1)
            for (int i0 = 0; i0 < 4; ++i0) {
                REQUIRE(got[(i2 * 5 + i1) * 4 + i0] == x[(i1 * 3 + i2) * 4 + i0]);
                REQUIRE(((uint16_t*)h->data)[(i2 * 5 + i1) * 4 + i0] ==
                        fp32_to_fp16(x[(i1 * 3 + i2) * 4 + i0]));
            }
}

namespace {
// Attention of q over cells; cells of "other" sequences are interleaved and masked.
std::vector<float> attention(bool flash, const std::vector<float>& q, const std::vector<float>& kv_k,
                             const std::vector<float>& kv_v, const std::vector<float>& mask, int64_t D,
                             int64_t n_q, int64_t H, int64_t Hkv, int64_t n_kv) {
    Runner r;
    Context ctx;
    auto qq = q, kk = kv_k, vv = kv_v, mm = mask;
    Tensor* tq = input(ctx, qq, {D, n_q, H});
    Tensor* k32 = input(ctx, kk, {D, n_kv, Hkv});
    Tensor* v32 = input(ctx, vv, {D, n_kv, Hkv});
    Tensor* k = dup(ctx, k32, Type::F16);
    Tensor* v = dup(ctx, v32, Type::F16);
    Tensor* tm = input(ctx, mm, {n_kv, n_q});
    const float sc = 1.0f / std::sqrt((float)D);
    Tensor* out;
    if (flash) {
        out = flash_attn(ctx, tq, k, v, tm, sc);  // [D, H, n_q]
    } else {
        Tensor* kq = soft_max(ctx, mul_mat(ctx, k, tq), tm, sc);
        out = cont(ctx, permute(ctx, mul_mat_t(ctx, v, kq), 0, 2, 1, 3));
    }
    r.run(out, 2);
    return read(out);
}
}  // namespace

TEST_CASE("attention: flash and standard paths agree, and masked interleaved cells change nothing",
          "[ggml][attention][invariance]") {
    const int64_t D = 32, n_q = 3, H = 4, Hkv = 2, n_own = 7;
    auto q = randn(D * n_q * H, 16);
    auto k_own = randn(D * n_own * Hkv, 17), v_own = randn(D * n_own * Hkv, 18);
    const float ninf = -std::numeric_limits<float>::infinity();
    // Layout A: only our cells. Causal mask: query t sees cells <= 4 + t.
    std::vector<float> mask_a(n_own * n_q);
    for (int t = 0; t < n_q; ++t)
        for (int j = 0; j < n_own; ++j) mask_a[t * n_own + j] = j <= 4 + t ? 0.0f : ninf;
    // Layout B: our cells at odd positions interleaved with foreign cells (random data, masked).
    const int64_t n_kv = 2 * n_own + 3;
    auto k_b = randn(D * n_kv * Hkv, 19), v_b = randn(D * n_kv * Hkv, 20);
    std::vector<float> mask_b(n_kv * n_q, ninf);
    for (int h = 0; h < Hkv; ++h)
        for (int j = 0; j < n_own; ++j)
            for (int d = 0; d < D; ++d) {
                k_b[(h * n_kv + 2 * j + 1) * D + d] = k_own[(h * n_own + j) * D + d];
                v_b[(h * n_kv + 2 * j + 1) * D + d] = v_own[(h * n_own + j) * D + d];
            }
    for (int t = 0; t < n_q; ++t)
        for (int j = 0; j < n_own; ++j) mask_b[t * n_kv + 2 * j + 1] = mask_a[t * n_own + j];

    for (bool flash : {false, true}) {
        auto a = attention(flash, q, k_own, v_own, mask_a, D, n_q, H, Hkv, n_own);
        auto b = attention(flash, q, k_b, v_b, mask_b, D, n_q, H, Hkv, n_kv);
        REQUIRE(a == b);  // bitwise
    }
    auto std_out = attention(false, q, k_own, v_own, mask_a, D, n_q, H, Hkv, n_own);
    auto fa_out = attention(true, q, k_own, v_own, mask_a, D, n_q, H, Hkv, n_own);
    for (size_t i = 0; i < std_out.size(); ++i) REQUIRE(fa_out[i] == Approx(std_out[i]).margin(2e-3));
}

TEST_CASE("the allocator reuses memory of finished intermediates", "[ggml][alloc]") {
    Runner r;
    Context ctx;
    const int64_t n = 1024;
    auto x = randn(n, 21);
    Tensor* t = input(ctx, x, {n});
    for (int i = 0; i < 20; ++i) t = scale(ctx, t, 1.0f + 0.01f * i);
    Graph g;
    g.build_forward(t);
    const size_t used = r.alloc.allocate(g);
    REQUIRE(used <= 3 * n * sizeof(float));  // a chain needs two live buffers, not twenty
    r.backend->graph_compute(g);
    double f = 1;
    for (int i = 0; i < 20; ++i) f *= 1.0 + 0.01 * i;
    auto got = read(t);
    for (int64_t i = 0; i < n; ++i) REQUIRE(got[i] == Approx(x[i] * f).epsilon(1e-5));
}

TEST_CASE("soft_max writes over its scores when it is their last reader, with the same bits",
          "[ggml][alloc][soft_max]") {
    const int64_t n0 = 77, n1 = 9, n2 = 4;
    auto x = randn(n0 * n1 * n2, 31);
    std::vector<float> m(n0 * n1);
    std::mt19937 rng(32);
    for (auto& v : m) v = rng() % 3 == 0 ? -std::numeric_limits<float>::infinity() : 0.0f;
    for (int64_t i1 = 0; i1 < n1; ++i1) m[i1 * n0 + i1] = 0.0f;
    // scores = 2x (an intermediate); probs = soft_max(scores). With keep_scores, scores is read again
    // afterwards, so probs must get memory of its own.
    auto run = [&](bool keep_scores, bool* shared) {
        Runner r;
        Context ctx;
        Tensor* scores = scale(ctx, input(ctx, x, {n0, n1, n2}), 2.0f);
        Tensor* probs = soft_max(ctx, scores, input(ctx, m, {n0, n1}), 0.25f);
        Tensor* out = keep_scores ? add(ctx, probs, scores) : scale(ctx, probs, 1.0f);
        Graph g;
        g.build_forward(out);
        r.alloc.allocate(g);
        *shared = probs->data == scores->data;
        r.backend->set_n_threads(3);
        r.backend->graph_compute(g);
        return std::make_pair(read(probs), read(out));
    };
    bool shared_last = false, shared_kept = true;
    const auto [probs_inplace, out_inplace] = run(false, &shared_last);
    const auto [probs_separate, out_kept] = run(true, &shared_kept);
    CHECK(shared_last);   // the last reader took the memory over
    CHECK(!shared_kept);  // a later reader of the scores keeps them intact
    REQUIRE(std::memcmp(probs_inplace.data(), probs_separate.data(), probs_inplace.size() * sizeof(float)) ==
            0);
    // The kept scores really are the scores: out = probs + 2x.
    for (size_t i = 0; i < x.size(); ++i) REQUIRE(out_kept[i] == probs_separate[i] + 2.0f * x[i]);
}

TEST_CASE("op builders reject bad shapes with clear errors", "[ggml][errors]") {
    Context ctx;
    Tensor* a = ctx.new_tensor_2d(Type::F32, 8, 4);
    Tensor* b = ctx.new_tensor_2d(Type::F32, 6, 4);
    REQUIRE_THROWS_WITH(mul_mat(ctx, a, b), Catch::Contains("inner dimensions"));
    REQUIRE_THROWS_AS(add(ctx, a, b), Error);
    REQUIRE_THROWS_AS(reshape_2d(ctx, a, 5, 5), Error);
    REQUIRE_THROWS_AS(ctx.new_tensor_1d(Type::Q4_0, 17), Error);
    REQUIRE_THROWS_AS(view_2d(ctx, a, 8, 5, a->nb[1], 0), Error);
}
