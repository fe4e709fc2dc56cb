// The ops the architecture rows added (rope_ext's YaRN and frequency factors, gelu, tanh/softcap, div,
// sum_rows, top_k, mul_mat_id, flash attention with soft-capping, attention sinks, swiglu_oai) against plain
// scalar references on random data at ragged shapes and thread counts.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include "ggml/src/cpu/kernels.h"
#include "ops_test_util.h"

using namespace ggml;
using namespace ops_test;

namespace {

Tensor* i32_input(Context& ctx, std::vector<int32_t>& data, std::initializer_list<int64_t> shape) {
    Tensor* t = ctx.new_tensor(Type::I32, (int)shape.size(), shape.begin());
    REQUIRE((size_t)t->nelements() == data.size());
    t->data = data.data();
    return t;
}

// llama.cpp's rope_ext for one pair, in double: the angle, YaRN's ramp between the correction
// dimensions, the magnitude factor.
void rope_pair_ref(const RopeParams& p, int pos, int i, const float* ff, double* c, double* s) {
    const double extrap = pos * std::pow((double)p.freq_base, -2.0 * i / p.n_dims) / (ff ? ff[i] : 1.0);
    double th = p.freq_scale * extrap, mscale = p.attn_factor;
    if (p.ext_factor != 0.0f) {
        auto corr = [&](double beta) {
            return p.n_dims * std::log(p.n_ctx_orig / (beta * 2 * M_PI)) /
                   (2 * std::log((double)p.freq_base));
        };
        const double lo = std::max(0.0, std::floor(corr(p.beta_fast)));
        const double hi = std::min((double)p.n_dims - 1, std::ceil(corr(p.beta_slow)));
        const double y = (i - lo) / std::max(0.001, hi - lo);
        const double mix = (1 - std::min(1.0, std::max(0.0, y))) * p.ext_factor;
        th = th * (1 - mix) + extrap * mix;
        mscale *= 1 + 0.1 * std::log(1.0 / p.freq_scale);
    }
    *c = std::cos(th) * mscale;
    *s = std::sin(th) * mscale;
}

}  // namespace

TEST_CASE("rope_ext: YaRN and frequency factors match the double reference, defaults equal rope",
          "[ggml][rope]") {
    for (int mode : {kRopeNormal, kRopeNeox})
        for (int variant = 0; variant < 3; ++variant) {
            Runner r;
            Context ctx;
            const int64_t hd = 20, nh = 3, nt = 5;
            const int n_rot = 16;
            auto x = randn(hd * nh * nt, 31);
            std::vector<int32_t> pos = {0, 3, 40, 511, 1999};
            std::vector<float> ff = {1.0f, 1.0f, 1.5f, 2.9f, 8.0f, 8.0f, 8.0f, 8.0f};
            RopeParams p;
            p.n_dims = n_rot;
            p.mode = mode;
            p.freq_base = 10000.0f;
            if (variant >= 1) {  // YaRN x4 over an original context of 512
                p.freq_scale = 0.25f;
                p.ext_factor = 1.0f;
                p.attn_factor = 0.9f;
                p.n_ctx_orig = 512;
            }
            const bool with_ff = variant == 2;
            Tensor* out = rope_ext(ctx, input(ctx, x, {hd, nh, nt}), i32_input(ctx, pos, {nt}),
                                   with_ff ? input(ctx, ff, {n_rot / 2}) : nullptr, p);
            r.run(out, variant + 1);
            auto got = read(out);
            for (int64_t t = 0; t < nt; ++t)
                for (int64_t h = 0; h < nh; ++h) {
                    const float* xr = &x[(t * nh + h) * hd];
                    const float* yr = &got[(t * nh + h) * hd];
                    for (int i = 0; i < n_rot / 2; ++i) {
                        double c, s;
                        rope_pair_ref(p, pos[t], i, with_ff ? ff.data() : nullptr, &c, &s);
                        const int a = mode == kRopeNeox ? i : 2 * i,
                                  b = mode == kRopeNeox ? i + n_rot / 2 : 2 * i + 1;
                        INFO("mode " << mode << " variant " << variant << " pos " << pos[t] << " pair " << i);
                        REQUIRE(yr[a] == Approx(xr[a] * c - xr[b] * s).margin(2e-3));
                        REQUIRE(yr[b] == Approx(xr[a] * s + xr[b] * c).margin(2e-3));
                    }
                    for (int64_t i = n_rot; i < hd; ++i) REQUIRE(yr[i] == xr[i]);
                }
            if (variant == 0) {  // rope_ext with default extensions is rope, bit for bit
                Runner r2;
                Context c2;
                Tensor* plain = rope(c2, input(c2, x, {hd, nh, nt}), i32_input(c2, pos, {nt}), n_rot, mode,
                                     10000.0f, 1.0f);
                r2.run(plain, 2);
                REQUIRE(read(plain) == got);
            }
        }
}

TEST_CASE("gelu is the f16 table of the tanh formula, tanh, softcap, div and sum_rows",
          "[ggml][activations]") {
    Runner r;
    Context ctx;
    const int64_t n0 = 37, n1 = 5;
    auto x = randn(n0 * n1, 32, 4.0f);
    x[0] = -10.5f, x[1] = 12.0f, x[2] = 0.0f, x[3] = -3.2e-5f;
    auto y = randn(n1, 33);
    for (auto& v : y) v = std::fabs(v) + 0.5f;
    Tensor* tx = input(ctx, x, {n0, n1});
    Tensor* g = gelu(ctx, tx);
    Tensor* th = tanh(ctx, tx);
    Tensor* sc = softcap(ctx, tx, 3.0f);
    Tensor* dv = div(ctx, tx, input(ctx, y, {1, n1}));
    Tensor* sr = sum_rows(ctx, tx);
    for (Tensor* t : {g, th, sc, dv, sr}) t->flags |= kFlagOutput;
    Tensor* all = add(ctx, add(ctx, g, th), add(ctx, sc, dv));
    Graph graph;
    graph.build_forward(all);
    graph.build_forward(sr);
    r.alloc.allocate(graph);
    r.backend->set_n_threads(3);
    r.backend->graph_compute(graph);
    auto rg = read(g), rt = read(th), rs = read(sc), rd = read(dv), rr = read(sr);
    for (int64_t i1 = 0; i1 < n1; ++i1) {
        double sum = 0;
        for (int64_t i = 0; i < n0; ++i) {
            const size_t k = (size_t)(i1 * n0 + i);
            const double v = x[k];
            sum += v;
            // the formula in double on the f16-rounded input, rounded to f16: within one f16 step
            const double xh = fp16_to_fp32(fp32_to_fp16(x[k]));
            const double ref =
                v <= -10  ? 0.0
                : v >= 10 ? v
                          : 0.5 * xh * (1 + std::tanh(std::sqrt(2 / M_PI) * xh * (1 + 0.044715 * xh * xh)));
            REQUIRE(rg[k] == Approx(ref).margin(1e-3 * std::fabs(ref) + 1e-7));
            REQUIRE(rt[k] == Approx(std::tanh(v)).margin(1e-6));
            REQUIRE(rs[k] == Approx(3.0 * std::tanh(v / 3.0)).margin(1e-5));
            REQUIRE(rd[k] == Approx(v / y[i1]).epsilon(1e-6));
        }
        REQUIRE(rr[i1] == Approx(sum).margin(1e-5));
    }
}

// The exact GELU against erfc in long double: within one float ulp everywhere (the op rounds a double
// once), through a strided view and at 1 to 3 threads; it is not the tanh form (4e-4 apart at x = -3).
TEST_CASE("gelu_erf is 0.5 x (1 + erf(x / sqrt 2)) within an ulp, not the tanh form", "[ggml][activations]") {
    const auto ulps = [](float got, long double ref) {
        const float r = (float)ref;
        if (got == r) return 0.0;
        return std::fabs((double)got - (double)ref) /
               (double)(std::nextafter(std::fabs(r), INFINITY) - std::fabs(r));
    };
    // 1 + erf(z) = erfc(-z): in long double without the cancellation of 1 + erf(z) for z well below 0.
    const auto exact = [](long double x) { return 0.5L * x * std::erfc(-x / std::sqrt(2.0L)); };
    for (int64_t n0 : {1, 37, 1000})
        for (int threads : {1, 3}) {
            Runner r;
            Context ctx;
            auto x = randn((size_t)n0 * 4, 90 + (uint64_t)n0, 5.0f);
            const std::vector<float> edges = {0.0f, -0.0f, 1.0f,  -1.0f,  1e-30f,  -1e-30f,
                                              8.0f, -8.0f, 40.0f, -40.0f, 3.0e38f, INFINITY};
            for (size_t i = 0; i < edges.size() && i < x.size(); ++i) x[i] = edges[i];
            // A transposed view: rows of 4 values with stride n0.
            Tensor* out = gelu_erf(ctx, transpose(ctx, input(ctx, x, {n0, 4})));
            out->flags |= kFlagOutput;
            Graph g;
            g.build_forward(out);
            r.alloc.allocate(g);
            r.backend->set_n_threads(threads);
            r.backend->graph_compute(g);
            const auto got = read(out);
            for (int64_t i1 = 0; i1 < n0; ++i1)
                for (int64_t i0 = 0; i0 < 4; ++i0) {
                    const float v = x[(size_t)(i0 * n0 + i1)];
                    const float y = got[(size_t)(i1 * 4 + i0)];
                    INFO("gelu_erf(" << v << ") = " << y);
                    if (std::isinf(v)) {
                        REQUIRE(y == v);
                        continue;
                    }
                    REQUIRE(ulps(y, exact(v)) <= 1.0);
                }
        }
    // Known values; the tanh form is measurably different.
    Runner r;
    Context ctx;
    std::vector<float> x = {1.0f, -1.0f, 0.5f, 2.0f, -3.0f};
    Tensor* e = gelu_erf(ctx, input(ctx, x, {5}));
    Tensor* t = gelu(ctx, input(ctx, x, {5}));
    e->flags |= kFlagOutput;
    t->flags |= kFlagOutput;
    Graph g;
    g.build_forward(e);
    g.build_forward(t);
    r.alloc.allocate(g);
    r.backend->graph_compute(g);
    const auto ge = read(e), gt = read(t);
    REQUIRE(ge[0] == Approx(0.8413447460685429).epsilon(1e-7));
    REQUIRE(ge[1] == Approx(-0.15865525393145707).epsilon(1e-7));
    REQUIRE(ge[2] == Approx(0.34573123063700656).epsilon(1e-7));
    REQUIRE(ge[3] == Approx(1.9544997361036416).epsilon(1e-7));
    REQUIRE(ge[4] == Approx(-0.004049694094890287).epsilon(1e-6));
    REQUIRE(std::fabs(ge[4] - gt[4]) > 3e-4);
    REQUIRE_THROWS(gelu_erf(ctx, ctx.new_tensor(Type::F16, 1, std::vector<int64_t>{4}.data())));
}

TEST_CASE("top_k: each row's k largest indices, largest first, ties by index", "[ggml][moe]") {
    for (auto [n, rows, k] : {std::tuple{8, 5, 2}, {3, 1, 3}, {61, 7, 5}, {128, 3, 1}}) {
        Runner r;
        Context ctx;
        auto x = randn((size_t)n * rows, 34 + n);
        if (n >= 8) x[3] = x[5] = 100.0f;  // a tie at the top of row 0
        Tensor* out = top_k(ctx, input(ctx, x, {n, rows}), k);
        r.run(out, 2);
        const int32_t* got = (const int32_t*)out->data;
        for (int row = 0; row < rows; ++row) {
            std::vector<int32_t> idx(n);
            std::iota(idx.begin(), idx.end(), 0);
            std::stable_sort(idx.begin(), idx.end(),
                             [&](int a, int b) { return x[row * n + a] > x[row * n + b]; });
            for (int j = 0; j < k; ++j) REQUIRE(got[row * k + j] == idx[j]);
        }
    }
}

namespace {

// mul_mat_id of `type` experts [K, M, n_exp] on activations [K, n_b, n_tok] (n_b 1: one row per token
// shared by its selected experts) with the expert ids `ids` [n_used, n_tok], at `nth` threads; checks
// every output against mul_mat of the selected expert's matrix with that one column (the same bits) and
// against a double-precision sum of the dequantized weights times the activations as the paired type
// holds them (the scalar reference of the values).
void check_mul_mat_id(Type type, int64_t K, int64_t M, int64_t n_exp, int64_t n_used, int64_t n_tok, bool shared_b,
                      const std::vector<int32_t>& ids, int nth) {
    Runner r;
    Context ctx;
    auto w = randn((size_t)K * M * n_exp, 40);
    std::vector<uint8_t> storage;
    Tensor* as;
    if (type == Type::F32) {
        as = input(ctx, w, {K, M, n_exp});
    } else {
        Tensor* q2 = quantized(ctx, type, w, K, M * n_exp, storage);
        as = ctx.new_tensor_3d(type, K, M, n_exp);
        as->data = q2->data;
    }
    const int64_t n_b = shared_b ? 1 : n_used;
    auto b = randn((size_t)K * n_b * n_tok, 41);
    std::vector<int32_t> id_data = ids;
    Tensor* out = mul_mat_id(ctx, as, input(ctx, b, {K, n_b, n_tok}), i32_input(ctx, id_data, {n_used, n_tok}));
    r.run(out, nth);
    auto got = read(out);
    const TypeTraits& tr = type_traits(type);
    const TypeTraits& vt = type_traits(tr.vec_dot_type);
    std::vector<float> wrow((size_t)K), xrow((size_t)K);
    std::vector<uint8_t> xq(row_size(tr.vec_dot_type, K));
    for (int64_t t = 0; t < n_tok; ++t)
        for (int64_t e = 0; e < n_used; ++e) {
            Runner r2;
            Context c2;
            const int32_t ex = ids[(size_t)(t * n_used + e)];
            Tensor* wa = c2.new_tensor_2d(type, K, M);
            wa->data = (char*)as->data + (size_t)ex * as->nb[2];
            std::vector<float> col(b.begin() + (t * n_b + (shared_b ? 0 : e)) * K,
                                   b.begin() + (t * n_b + (shared_b ? 0 : e) + 1) * K);
            Tensor* ref = mul_mat(c2, wa, input(c2, col, {K, 1}));
            r2.run(ref, 1);
            auto want = read(ref);
            // the activation column as the kernels see it
            if (tr.vec_dot_type == Type::F32) {
                xrow = col;
            } else {
                vt.from_float_ref(col.data(), xq.data(), K);
                vt.to_float(xq.data(), xrow.data(), K);
            }
            for (int64_t m = 0; m < M; ++m) {
                INFO(type_name(type) << " K " << K << " M " << M << " expert " << ex << " token " << t << " slot "
                                     << e << " row " << m << " threads " << nth);
                const float g = got[(size_t)((t * n_used + e) * M + m)];
                REQUIRE(g == want[(size_t)m]);
                if (type == Type::F32)
                    std::copy(w.begin() + (ex * M + m) * K, w.begin() + (ex * M + m + 1) * K, wrow.begin());
                else
                    tr.to_float(wa->row_ptr(m), wrow.data(), K);
                double sum = 0, mag = 0;
                for (int64_t k = 0; k < K; ++k) {
                    sum += (double)wrow[(size_t)k] * xrow[(size_t)k];
                    mag += std::fabs((double)wrow[(size_t)k] * xrow[(size_t)k]);
                }
                REQUIRE(std::fabs(g - sum) <= 1e-5 * mag + 1e-6);
            }
        }
}

}  // namespace

TEST_CASE("mul_mat_id gives mul_mat's bits for each selected expert", "[ggml][moe]") {
    for (Type type : {Type::F32, Type::Q8_0, Type::Q4_K})
        for (auto [K, M, n_exp, n_used, n_tok] :
             {std::tuple{256, 7, 4, 2, 3}, {256, 33, 8, 3, 1}, {512, 5, 3, 3, 5}})
            for (bool shared_b : {true, false}) {
                std::vector<int32_t> ids((size_t)n_used * n_tok);
                for (size_t i = 0; i < ids.size(); ++i) ids[i] = (int32_t)((i * 5 + 1) % n_exp);
                check_mul_mat_id(type, K, M, n_exp, n_used, n_tok, shared_b, ids, 3);
            }
}

TEST_CASE("mul_mat_id on a prefill: experts with many, one or no columns, several tiles, 1 to 3 threads",
          "[ggml][moe]") {
    // 150 tokens, 2 of 6 experts each: expert 0 gets more than one 64-column tile, expert 5 one column,
    // expert 4 none; 100 rows are a full and a partial 64-row tile. Large enough for the two-phase form
    // (activations gathered once, shared), the small cases above take the private one.
    const int64_t K = 256, M = 100, n_exp = 6, n_used = 2, n_tok = 150;
    std::vector<int32_t> ids((size_t)(n_used * n_tok));
    for (int64_t t = 0; t < n_tok; ++t) {
        ids[(size_t)(t * n_used)] = t % 3 == 2 ? 1 : 0;                  // expert 0: 100 columns
        ids[(size_t)(t * n_used + 1)] = t == 77 ? 5 : (int32_t)(2 + t % 2);  // 2, 3; expert 5 once
    }
    const cpu::IsaLevel saved = cpu::isa_level();
    for (cpu::IsaLevel level : {cpu::IsaLevel::Scalar, cpu::IsaLevel::Avx2, cpu::IsaLevel::Avx512}) {
        if (level > cpu::detected_isa_level()) continue;
        cpu::set_isa_level_for_testing(level);
        INFO("level " << cpu::isa_level_name(level));
        for (Type type : {Type::F32, Type::Q8_0, Type::Q4_0, Type::Q4_K})
            for (int nth : {1, 3}) {
                check_mul_mat_id(type, K, M, n_exp, n_used, n_tok, true, ids, nth);
                if (type == Type::Q8_0) check_mul_mat_id(type, K, M, n_exp, n_used, n_tok, false, ids, nth);
            }
    }
    cpu::set_isa_level_for_testing(saved);
}

namespace {

constexpr double kMasked = -std::numeric_limits<double>::infinity();

// Double-precision attention over f16-rounded q, k, v ([D, n_q, H] and [D, n_kv, Hkv], GQA): score(h, t, j,
// q.k) gives a cell's score, -inf where it is masked. Returns [D, H, n_q], as flash_attn lays out its result.
std::vector<double> attention_reference(const std::vector<float>& q, const std::vector<float>& k,
                                        const std::vector<float>& v, int64_t D, int64_t n_q, int64_t H, int64_t Hkv,
                                        int64_t n_kv,
                                        const std::function<double(int64_t, int64_t, int64_t, double)>& score) {
    const auto h16 = [](float x) { return (double)fp16_to_fp32(fp32_to_fp16(x)); };
    std::vector<double> out((size_t)(D * H * n_q));
    for (int64_t t = 0; t < n_q; ++t)
        for (int64_t h = 0; h < H; ++h) {
            const int64_t hk = h / (H / Hkv);
            std::vector<double> s((size_t)n_kv);
            double mx = -1e300, sum = 0;
            for (int64_t j = 0; j < n_kv; ++j) {
                double d = 0;
                for (int64_t i = 0; i < D; ++i) d += h16(q[(h * n_q + t) * D + i]) * h16(k[(hk * n_kv + j) * D + i]);
                s[j] = score(h, t, j, d);
                if (std::isfinite(s[j])) mx = std::max(mx, s[j]);
            }
            for (int64_t j = 0; j < n_kv; ++j)
                if (std::isfinite(s[j])) sum += std::exp(s[j] - mx);
            for (int64_t i = 0; i < D; ++i) {
                double ref = 0;
                for (int64_t j = 0; j < n_kv; ++j)
                    if (std::isfinite(s[j])) ref += std::exp(s[j] - mx) / sum * h16(v[(hk * n_kv + j) * D + i]);
                out[(size_t)((t * H + h) * D + i)] = ref;
            }
        }
    return out;
}

struct AttnShape {
    int64_t D, n_q, H, Hkv, n_kv, mask_planes;  // mask_planes: 1, or H (a plane per head)
};

// Attention of q [D, n_q, H] over k, v [D, n_kv, Hkv] (stored as f16) with the mask [n_kv, n_q,
// mask_planes] (as mask_type) and the heads' sinks (nullable), flash or unfused (mul_mat, soft_max,
// mul_mat_t), at nth threads: [D, H, n_q].
std::vector<float> attend(const AttnShape& a, std::vector<float>& q, std::vector<float>& k,
                          std::vector<float>& v, std::vector<float>& mask, Type mask_type,
                          std::vector<float>* sinks, float scale, bool flash, int nth) {
    Runner r;
    Context ctx;
    Tensor* tq = input(ctx, q, {a.D, a.n_q, a.H});
    Tensor* tk = dup(ctx, input(ctx, k, {a.D, a.n_kv, a.Hkv}), Type::F16);
    Tensor* tv = dup(ctx, input(ctx, v, {a.D, a.n_kv, a.Hkv}), Type::F16);
    Tensor* tm = input(ctx, mask, {a.n_kv, a.n_q, a.mask_planes});
    if (mask_type == Type::F16) tm = dup(ctx, tm, Type::F16);
    Tensor* ts = sinks ? input(ctx, *sinks, {a.H}) : nullptr;
    Tensor* out;
    if (flash) {
        out = flash_attn(ctx, tq, tk, tv, tm, scale, 0.0f, ts);
    } else {
        Tensor* kq = soft_max(ctx, mul_mat(ctx, tk, tq), tm, scale, ts);
        out = cont(ctx, permute(ctx, mul_mat_t(ctx, tv, kq), 0, 2, 1, 3));
    }
    r.run(out, nth);
    return read(out);
}

}  // namespace

TEST_CASE("flash attention with soft-capping equals softcap + soft_max and a double reference",
          "[ggml][attention]") {
    const int64_t D = 32, n_q = 5, H = 4, Hkv = 2, n_kv = 9;
    const float cap = 2.0f;
    auto q = randn(D * n_q * H, 50, 0.7f), k = randn(D * n_kv * Hkv, 51, 0.7f), v = randn(D * n_kv * Hkv, 52);
    const float ninf = -std::numeric_limits<float>::infinity();
    std::vector<float> mask(n_kv * n_q);
    for (int t = 0; t < n_q; ++t)
        for (int j = 0; j < n_kv; ++j) mask[t * n_kv + j] = j <= 4 + t && j + 6 > 4 + t ? 0.0f : ninf;
    std::vector<float> outs[2];
    for (bool flash : {false, true}) {
        Runner r;
        Context ctx;
        Tensor* tq = input(ctx, q, {D, n_q, H});
        Tensor* tk = dup(ctx, input(ctx, k, {D, n_kv, Hkv}), Type::F16);
        Tensor* tv = dup(ctx, input(ctx, v, {D, n_kv, Hkv}), Type::F16);
        Tensor* tm = input(ctx, mask, {n_kv, n_q});
        Tensor* out;
        if (flash) {
            out = flash_attn(ctx, tq, tk, tv, tm, 1.0f, cap);
        } else {
            Tensor* kq = soft_max(ctx, softcap(ctx, mul_mat(ctx, tk, tq), cap), tm, 1.0f);
            out = cont(ctx, permute(ctx, mul_mat_t(ctx, tv, kq), 0, 2, 1, 3));
        }
        r.run(out, 2);
        outs[flash] = read(out);
    }
    REQUIRE(outs[0] == outs[1]);
    const auto ref = attention_reference(q, k, v, D, n_q, H, Hkv, n_kv, [&](int64_t, int64_t t, int64_t j, double d) {
        return mask[t * n_kv + j] == ninf ? kMasked : cap * std::tanh(d / cap);
    });
    for (size_t i = 0; i < ref.size(); ++i) REQUIRE(outs[1][i] == Approx(ref[i]).margin(5e-3));
}

TEST_CASE("attention with a mask plane per head (ALiBi): flash and unfused agree with a double reference",
          "[ggml][attention]") {
    // 6 heads over 3 KV heads, a mask plane each: distinct per-head biases and a different visible set per
    // query; F32 and F16 masks, 1 and 3 threads.
    const int64_t D = 32, n_q = 7, H = 6, Hkv = 3, n_kv = 11;
    auto q = randn(D * n_q * H, 60, 0.7f), k = randn(D * n_kv * Hkv, 61, 0.7f), v = randn(D * n_kv * Hkv, 62);
    const float ninf = -std::numeric_limits<float>::infinity();
    std::vector<float> mask(n_kv * n_q * H);
    for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < n_q; ++t)
            for (int64_t j = 0; j < n_kv; ++j)
                mask[(h * n_q + t) * n_kv + j] =
                    (j + t) % 5 == 4 ? ninf : -0.25f * (float)(h + 1) * (float)std::abs(j - t - 2);
    for (Type mt : {Type::F32, Type::F16})
        for (int nth : {1, 3}) {
            std::vector<float> outs[2];
            for (bool flash : {false, true})
                outs[flash] = attend({D, n_q, H, Hkv, n_kv, H}, q, k, v, mask, mt, nullptr, 0.125f, flash, nth);
            INFO("mask " << type_name(mt) << ", " << nth << " threads");
            REQUIRE(outs[0] == outs[1]);
            const auto ref =
                attention_reference(q, k, v, D, n_q, H, Hkv, n_kv, [&](int64_t h, int64_t t, int64_t j, double d) {
                    const float m = mask[(h * n_q + t) * n_kv + j];
                    if (m == ninf) return kMasked;
                    return 0.125 * d + (mt == Type::F16 ? (double)fp16_to_fp32(fp32_to_fp16(m)) : (double)m);
                });
            for (size_t i = 0; i < ref.size(); ++i) REQUIRE(outs[1][i] == Approx(ref[i]).margin(5e-3));
        }
    // A mask with a plane count that is neither 1 nor the number of heads is refused.
    Context ctx;
    Tensor* tq = input(ctx, q, {D, n_q, H});
    Tensor* tk = dup(ctx, input(ctx, k, {D, n_kv, Hkv}), Type::F16);
    Tensor* tv = dup(ctx, input(ctx, v, {D, n_kv, Hkv}), Type::F16);
    std::vector<float> two(n_kv * n_q * 2, 0.0f);
    REQUIRE_THROWS(flash_attn(ctx, tq, tk, tv, input(ctx, two, {n_kv, n_q, 2}), 1.0f));
}

TEST_CASE("norm (LayerNorm) matches the double reference at ragged shapes, strided input and thread counts",
          "[ggml][norm]") {
    for (int64_t n0 : {1, 7, 128, 333})
        for (int nth : {1, 3}) {
            Runner r;
            Context ctx;
            const int64_t n1 = 5, n2 = 2;
            auto x = randn(n0 * n1 * n2, 40 + (uint32_t)n0, 3.0f);
            for (auto& v : x) v += 2.5f;  // a mean far from 0: the centring matters
            Tensor* tx = input(ctx, x, {n0, n1, n2});
            const float eps = 1e-12f;
            Tensor* y = norm(ctx, tx, eps);
            // a transposed (strided) input: rows along the old ne1
            Tensor* yt = norm(ctx, transpose(ctx, reshape_2d(ctx, tx, n0, n1 * n2)), 1e-5f);
            Tensor* both = add(ctx, cont(ctx, yt), cont(ctx, yt));  // yt is computed through a graph node
            r.run(y, nth);
            const auto got = read(y);
            for (int64_t row = 0; row < n1 * n2; ++row) {
                double mean = 0, var = 0;
                for (int64_t i = 0; i < n0; ++i) mean += x[row * n0 + i];
                mean /= n0;
                for (int64_t i = 0; i < n0; ++i) var += (x[row * n0 + i] - mean) * (x[row * n0 + i] - mean);
                var /= n0;
                for (int64_t i = 0; i < n0; ++i) {
                    const double want = (x[row * n0 + i] - mean) / std::sqrt(var + eps);
                    REQUIRE(std::fabs(got[row * n0 + i] - want) <= 1e-4 * (1 + std::fabs(want)));
                }
            }
            r.run(both, nth);
            const auto gt = read(both);  // [n1 * n2, n0]: row j is column j of the input, doubled
            for (int64_t j = 0; j < n0; ++j) {
                double mean = 0, var = 0;
                const int64_t m = n1 * n2;
                for (int64_t k = 0; k < m; ++k) mean += x[k * n0 + j];
                mean /= m;
                for (int64_t k = 0; k < m; ++k) var += (x[k * n0 + j] - mean) * (x[k * n0 + j] - mean);
                var /= m;
                for (int64_t k = 0; k < m; ++k) {
                    const double want = 2 * (x[k * n0 + j] - mean) / std::sqrt(var + 1e-5);
                    REQUIRE(std::fabs(gt[j * m + k] - want) <= 2e-4 * (1 + std::fabs(want)));
                }
            }
        }
}

// gpt-oss's attention sinks: each head's extra logit joins the maximum and the denominator of its softmax
// (no output). Flash and unfused attention agree bit for bit with them, and both match a double
// reference; a sink far below the scores changes nothing, a large one takes almost all the weight.
TEST_CASE("attention sinks: soft_max and flash attention equal each other and a double reference",
          "[ggml][attention]") {
    const int64_t D = 32, n_q = 6, H = 4, Hkv = 2, n_kv = 13;
    auto q = randn(D * n_q * H, 80, 0.7f), k = randn(D * n_kv * Hkv, 81, 0.7f), v = randn(D * n_kv * Hkv, 82);
    const float ninf = -std::numeric_limits<float>::infinity();
    std::vector<float> mask(n_kv * n_q);
    for (int64_t t = 0; t < n_q; ++t)
        for (int64_t j = 0; j < n_kv; ++j) mask[t * n_kv + j] = j <= 7 + t && (j + t) % 5 != 3 ? 0.0f : ninf;
    const float scale = 0.25f;
    // Below, around and above the scores; the last head's sink dominates its rows.
    std::vector<float> sinks = {-30.0f, 0.5f, 2.0f, 12.0f};
    for (int nth : {1, 3}) {
        std::vector<float> outs[2];
        for (bool flash : {false, true})
            outs[flash] = attend({D, n_q, H, Hkv, n_kv, 1}, q, k, v, mask, Type::F32, &sinks, scale, flash, nth);
        INFO(nth << " threads");
        REQUIRE(outs[0] == outs[1]);
        // The reference: a softmax over the row's scores and the sink, the sink's weight dropped.
        const auto h16 = [](float x) { return (double)fp16_to_fp32(fp32_to_fp16(x)); };
        for (int64_t t = 0; t < n_q; ++t)
            for (int64_t h = 0; h < H; ++h) {
                const int64_t hk = h / (H / Hkv);
                std::vector<double> s((size_t)n_kv, kMasked);
                double mx = sinks[h];
                for (int64_t j = 0; j < n_kv; ++j) {
                    if (mask[t * n_kv + j] == ninf) continue;
                    double d = 0;
                    for (int64_t i = 0; i < D; ++i)
                        d += h16(q[(h * n_q + t) * D + i]) * h16(k[(hk * n_kv + j) * D + i]);
                    s[j] = scale * d;
                    mx = std::max(mx, s[j]);
                }
                double sum = std::exp(sinks[h] - mx);
                for (int64_t j = 0; j < n_kv; ++j)
                    if (std::isfinite(s[j])) sum += std::exp(s[j] - mx);
                double weight = 0;
                for (int64_t i = 0; i < D; ++i) {
                    double ref = 0;
                    for (int64_t j = 0; j < n_kv; ++j)
                        if (std::isfinite(s[j])) ref += std::exp(s[j] - mx) / sum * h16(v[(hk * n_kv + j) * D + i]);
                    REQUIRE(outs[1][(size_t)((t * H + h) * D + i)] == Approx(ref).margin(5e-3));
                }
                for (int64_t j = 0; j < n_kv; ++j)
                    if (std::isfinite(s[j])) weight += std::exp(s[j] - mx) / sum;
                if (h == 0) REQUIRE(weight == Approx(1.0).margin(1e-6));  // a sink far below: no effect
                if (h == 3) REQUIRE(weight < 0.05);                       // the sink takes the weight
            }
    }
    // One sink per head, F32: anything else is refused.
    Context ctx;
    Tensor* tq = input(ctx, q, {D, n_q, H});
    Tensor* tk = dup(ctx, input(ctx, k, {D, n_kv, Hkv}), Type::F16);
    Tensor* tv = dup(ctx, input(ctx, v, {D, n_kv, Hkv}), Type::F16);
    std::vector<float> three(3, 0.0f);
    REQUIRE_THROWS_WITH(flash_attn(ctx, tq, tk, tv, nullptr, 1.0f, 0.0f, input(ctx, three, {3})),
                        Catch::Contains("one per head"));
    REQUIRE_THROWS_WITH(soft_max(ctx, mul_mat(ctx, tk, tq), nullptr, 1.0f, input(ctx, three, {3})),
                        Catch::Contains("one per head"));
}

// gpt-oss's expert activation against its formula in double, at ragged lengths, with values beyond the
// limit on both inputs (the gate is clamped from above only, the linear part from both sides).
TEST_CASE("swiglu_oai matches its formula with both clamps", "[ggml][moe]") {
    const float alpha = 1.702f, limit = 7.0f;
    for (int64_t n0 : {1, 17, 64, 131}) {
        auto a = randn((size_t)(n0 * 3), 90 + (uint32_t)n0, 6.0f), b = randn((size_t)(n0 * 3), 91, 6.0f);
        a[0] = 9.0f, b[0] = -9.0f;  // both clamps, in every shape
        if (n0 > 1) a[1] = -9.0f, b[1] = 9.0f;
        for (int nth : {1, 2}) {
            Runner r;
            Context ctx;
            Tensor* out = swiglu_oai(ctx, input(ctx, a, {n0, 3}), input(ctx, b, {n0, 3}), alpha, limit);
            r.run(out, nth);
            const auto got = read(out);
            for (size_t i = 0; i < got.size(); ++i) {
                const double x = std::min((double)a[i], (double)limit);
                const double y = std::clamp((double)b[i], -(double)limit, (double)limit);
                const double want = x / (1.0 + std::exp(-alpha * x)) * (y + 1.0);
                INFO("n0 " << n0 << " i " << i << " a " << a[i] << " b " << b[i]);
                REQUIRE(got[i] == Approx(want).epsilon(1e-5).margin(1e-6));
            }
        }
    }
    Context ctx;
    std::vector<float> x(8, 1.0f), y(4, 1.0f);
    REQUIRE_THROWS(swiglu_oai(ctx, input(ctx, x, {8}), input(ctx, y, {4}), alpha, limit));
    REQUIRE_THROWS(swiglu_oai(ctx, input(ctx, x, {8}), input(ctx, x, {8}), alpha, 0.0f));
}
