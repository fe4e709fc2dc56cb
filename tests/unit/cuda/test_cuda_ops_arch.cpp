// The ops of the newer architectures on CUDA against the CPU backend, at several shapes including ragged
// ones: div, tanh and gelu (qwen/phi/gemma), norm (BERT), sum_rows, top_k and mul_mat_id (mixture of
// experts), rope_ext (frequency factors, YaRN), and a whole MoE feed-forward block. All but rope are the
// same bytes as the CPU (plain float steps, glibc's tanhf steps, sequential double sums, the reference dot
// products); rope's cos and sin are correctly rounded on the device, within an ulp of glibc's.
#include "cuda_test_util.h"

using namespace cuda_test;

namespace {

const Type kWeightTypes[] = {Type::F32,  Type::F16,  Type::BF16, Type::Q4_0,  Type::Q4_1,
                             Type::Q5_0, Type::Q5_1, Type::Q8_0, Type::Q2_K,  Type::Q3_K,
                             Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::IQ4_NL};

// Expert ids [n_used, n_tokens] in [0, n_expert): distinct per token, as a router picks them, or with
// repeats (the op allows them).
std::vector<int32_t> expert_ids(int64_t n_used, int64_t n_tokens, int64_t n_expert, bool distinct,
                                uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> ids;
    for (int64_t t = 0; t < n_tokens; ++t) {
        std::vector<int32_t> all((size_t)n_expert);
        for (int64_t e = 0; e < n_expert; ++e) all[(size_t)e] = (int32_t)e;
        std::shuffle(all.begin(), all.end(), rng);
        for (int64_t e = 0; e < n_used; ++e)
            ids.push_back(distinct ? all[(size_t)e] : (int32_t)(rng() % (uint32_t)n_expert));
    }
    return ids;
}

}  // namespace

TEST_CASE("CUDA div broadcasts like the CPU", "[cuda][elementwise]") {
    struct Shape {
        std::vector<int64_t> a, b;
    };
    for (const Shape& s : {Shape{{33, 5, 3, 2}, {33, 5, 3, 2}}, Shape{{33, 5, 3, 2}, {1, 5, 3, 2}},
                           Shape{{4097, 3, 1, 1}, {4097, 1, 1, 1}}, Shape{{16, 6, 4, 2}, {8, 3, 2, 1}}}) {
        const size_t na = (size_t)(s.a[0] * s.a[1] * s.a[2] * s.a[3]),
                     nb = (size_t)(s.b[0] * s.b[1] * s.b[2] * s.b[3]);
        const auto a = randn(na, 50, 3.0f), b = randn(nb, 51);
        check_identical([&](Inputs& in) { return div(in.ctx, in.f32(s.a, a), in.f32(s.b, b)); });
    }
}

// tanh takes glibc's tanhf steps and gelu computes the CPU table's entry (tanh.h): the same bytes, over
// the whole range (gelu's clamps at +-10, tanh's saturation at 22), also through a strided view and as
// the soft-cap (scale, tanh, scale).
TEST_CASE("CUDA tanh, gelu and softcap", "[cuda][elementwise]") {
    for (int64_t ne0 : {1, 31, 256, 1000}) {
        const auto a = randn((size_t)ne0 * 3, 52, 8.0f);
        check_identical([&](Inputs& in) { return ggml::tanh(in.ctx, in.f32({ne0, 3}, a)); });
        check_identical([&](Inputs& in) { return gelu(in.ctx, in.f32({ne0, 3}, a)); });
        check_identical([&](Inputs& in) { return softcap(in.ctx, in.f32({ne0, 3}, a), 30.0f); });
    }
    std::vector<float> edges = {-30.0f, -22.0f, -10.0f, -9.999f, -1.0f, -1e-20f, -0.0f,    0.0f,     1e-20f,
                                0.5f,   1.0f,   9.999f, 10.0f,   22.0f, 30.0f,   INFINITY, -INFINITY};
    const int64_t n = (int64_t)edges.size();
    check_identical([&](Inputs& in) { return ggml::tanh(in.ctx, in.f32({n}, edges)); });
    check_identical([&](Inputs& in) { return gelu(in.ctx, in.f32({n}, edges)); });
    const auto a = randn(8 * 5 * 3, 53, 4.0f);
    check_identical([&](Inputs& in) {
        return gelu(in.ctx, permute(in.ctx, in.f32({8, 5, 3}, a), 1, 0, 2, 3));
    });
    check_identical([&](Inputs& in) {
        return ggml::tanh(in.ctx, permute(in.ctx, in.f32({8, 5, 3}, a), 1, 0, 2, 3));
    });
}

// gelu_erf in double, rounded once: CUDA's double erfc (a few ulp of a double) may move a float rounding
// only at a tie's edge, so within one ulp of the CPU, and almost always the same bits (counted).
TEST_CASE("CUDA gelu_erf within an ulp of the CPU", "[cuda][elementwise]") {
    Backend& cuda = cuda_backend();
    for (int64_t ne0 : {1, 31, 1000, 65536}) {
        auto a = randn((size_t)ne0 * 3, 55, 6.0f);
        const std::vector<float> edges = {0.0f, -0.0f, 1.0f, -1.0f, 1e-30f, 40.0f, -40.0f, INFINITY};
        for (size_t i = 0; i < edges.size() && i < a.size(); ++i) a[i] = edges[i];
        const Build build = [&](Inputs& in) { return gelu_erf(in.ctx, in.f32({ne0, 3}, a)); };
        const auto ref = floats_of(run_cpu(build));
        const auto got = floats_of(run_cuda(build, cuda));
        REQUIRE(got.size() == ref.size());
        size_t differ = 0;
        for (size_t i = 0; i < ref.size(); ++i) {
            if (got[i] == ref[i] || (std::isnan(got[i]) && std::isnan(ref[i]))) continue;
            ++differ;
            INFO("x " << a[i] << ": CPU " << ref[i] << ", CUDA " << got[i]);
            REQUIRE(
                (got[i] == std::nextafter(ref[i], INFINITY) || got[i] == std::nextafter(ref[i], -INFINITY)));
        }
        WARN("gelu_erf, " << ref.size() << " values: " << differ << " differ by one ulp");
    }
    const auto a = randn(8 * 5 * 3, 56, 4.0f);
    check_close(
        [&](Inputs& in) {
            return gelu_erf(in.ctx, permute(in.ctx, in.f32({8, 5, 3}, a), 1, 0, 2, 3));
        },
        1e-6);
}

// Sequential double sums in the CPU's order: the same bytes.
TEST_CASE("CUDA norm and sum_rows at ragged row lengths", "[cuda][norm]") {
    for (int64_t ne0 : {1, 33, 64, 768, 4097}) {
        auto a = randn((size_t)ne0 * 7, 54, 3.0f);
        for (int64_t i = 0; i < ne0; ++i) a[(size_t)(3 * ne0 + i)] += 500.0f;  // a row far from zero
        check_identical([&](Inputs& in) { return norm(in.ctx, in.f32({ne0, 7}, a), 1e-5f); });
        check_identical([&](Inputs& in) { return sum_rows(in.ctx, in.f32({ne0, 7}, a)); });
        check_identical([&](Inputs& in) {
            return norm(in.ctx, transpose(in.ctx, in.f32({ne0, 7}, a)), 1e-12f);
        });
        check_identical([&](Inputs& in) { return sum_rows(in.ctx, transpose(in.ctx, in.f32({ne0, 7}, a))); });
    }
    const auto a = randn(16 * 3 * 5 * 2, 55);
    check_identical([&](Inputs& in) { return sum_rows(in.ctx, in.f32({16, 3, 5, 2}, a)); });
    check_identical([&](Inputs& in) { return norm(in.ctx, in.f32({16, 3, 5, 2}, a), 1e-6f); });
}

// Ties go to the lower index on both; rows up to kTopKMaxRow (4096) run on the GPU, longer ones are
// refused (the CPU sorts them).
TEST_CASE("CUDA top_k with ties, k from 1 to the row length", "[cuda][top_k]") {
    std::mt19937 rng(56);
    for (int64_t n : {1, 8, 60, 128, 4096}) {
        const auto g = randn((size_t)(n * 5), 57);
        std::vector<float> x(g);
        for (size_t i = 0; i < x.size(); i += 3) x[i] = (float)(rng() % 4) * 0.5f;  // ties, +0 among them
        for (int64_t k : {int64_t(1), std::min<int64_t>(n, 2), std::min<int64_t>(n, 8), n}) {
            INFO("n " << n << " k " << k);
            check_identical([&](Inputs& in) { return top_k(in.ctx, in.f32({n, 5}, x), (int)k); });
        }
    }
    // A strided row (a transposed matrix).
    const auto y = randn(40 * 9, 58);
    check_identical([&](Inputs& in) { return top_k(in.ctx, transpose(in.ctx, in.f32({40, 9}, y)), 4); });
    Context ctx;
    Tensor* longer = ctx.new_tensor(Type::F32, 2, std::vector<int64_t>{4097, 2}.data());
    REQUIRE_FALSE(cuda_backend().supports_op(top_k(ctx, longer, 8)));
}

TEST_CASE("CUDA rope_ext: frequency factors, YaRN and the attention factor", "[cuda][rope]") {
    struct Case {
        int64_t head_dim, n_head, n_tok;
        int n_dims;
        bool ff;
        float freq_scale, ext_factor, attn_factor;
    };
    for (const Case& c :
         {Case{64, 4, 5, 64, true, 1.0f, 0.0f, 1.0f}, Case{128, 2, 3, 64, false, 0.25f, 1.0f, 1.0f},
          Case{80, 3, 37, 80, true, 0.125f, 1.0f, 0.9f}, Case{16, 2, 2, 16, false, 1.0f, 0.0f, 1.3f}}) {
        for (int mode : {kRopeNormal, kRopeNeox}) {
            INFO("head_dim " << c.head_dim << " n_dims " << c.n_dims << " mode " << mode);
            const auto x = randn((size_t)(c.head_dim * c.n_head * c.n_tok), 59);
            std::vector<int32_t> pos((size_t)c.n_tok);
            for (int64_t i = 0; i < c.n_tok; ++i) pos[(size_t)i] = (int32_t)(i * 977 % 30011);
            std::vector<float> ff((size_t)c.n_dims / 2);
            for (size_t i = 0; i < ff.size(); ++i) ff[i] = 1.0f + 0.37f * (float)i;
            RopeParams rp;
            rp.n_dims = c.n_dims;
            rp.mode = mode;
            rp.n_ctx_orig = 4096;
            rp.freq_base = 500000.0f;
            rp.freq_scale = c.freq_scale;
            rp.ext_factor = c.ext_factor;
            rp.attn_factor = c.attn_factor;
            check_close(
                [&](Inputs& in) {
                    return rope_ext(in.ctx, in.f32({c.head_dim, c.n_head, c.n_tok}, x),
                                    in.i32({c.n_tok}, pos), c.ff ? in.f32({c.n_dims / 2}, ff) : nullptr, rp);
                },
                kUlpTol);
        }
    }
}

// Each output one reference dot product of the selected expert's row and the token's activations quantized
// to the paired type: block formats give the CPU's bytes, float weights agree to rounding of a double sum.
TEST_CASE("CUDA mul_mat_id for every weight type, one or n_used activation rows per token",
          "[cuda][mul_mat_id]") {
    for (Type t : kWeightTypes) {
        const int64_t K = block_size(t) == 256 ? 512 : 320, M = 37, n_expert = 5, n_used = 2;
        for (int64_t n_tokens : {1, 9}) {
            for (int64_t n_b : {int64_t(1), n_used}) {
                for (bool distinct : {true, false}) {
                    INFO("type " << type_name(t) << " tokens " << n_tokens << " n_b " << n_b
                                 << (distinct ? "" : ", repeated experts"));
                    const auto w = randn((size_t)(K * M * n_expert), 60),
                               x = randn((size_t)(K * n_b * n_tokens), 61);
                    const auto ids = expert_ids(n_used, n_tokens, n_expert, distinct, 62);
                    const Build b = [&](Inputs& in) {
                        return mul_mat_id(in.ctx, in.add(t, {K, M, n_expert}, to_type(t, w, K)),
                                          in.f32({K, n_b, n_tokens}, x), in.i32({n_used, n_tokens}, ids));
                    };
                    if (block_size(t) > 1)
                        check_identical(b);
                    else
                        check_close(b, kUlpTolFloatDot);
                }
            }
        }
    }
}

// A mixture-of-experts feed-forward block as the qwen2moe/llama-moe graphs build it, every node on the GPU:
// router logits, softmax, top_k, the selected weights (get_rows), their sum and normalization (sum_rows,
// div), the gate/up/down experts (mul_mat_id), the GELU/SwiGLU activation, the weighted sum of experts.
TEST_CASE("CUDA MoE feed-forward block equals the CPU", "[cuda][mul_mat_id][graph]") {
    const int64_t n_embd = 256, n_ff = 96, n_expert = 8, n_used = 2;
    for (int64_t n_tokens : {1, 7}) {
        for (bool use_gelu : {false, true}) {
            INFO("tokens " << n_tokens << (use_gelu ? " gelu" : " swiglu"));
            const auto x = randn((size_t)(n_embd * n_tokens), 63);
            const auto router = randn((size_t)(n_embd * n_expert), 64, 0.2f);
            const auto gate = randn((size_t)(n_embd * n_ff * n_expert), 65, 0.1f);
            const auto up = randn((size_t)(n_embd * n_ff * n_expert), 66, 0.1f);
            const auto down = randn((size_t)(n_ff * n_embd * n_expert), 67, 0.1f);
            check_identical([&](Inputs& in) {
                Context& c = in.ctx;
                Tensor* cur = in.f32({n_embd, n_tokens}, x);
                Tensor* logits = mul_mat(
                    c, in.add(Type::Q8_0, {n_embd, n_expert}, to_type(Type::Q8_0, router, n_embd)), cur);
                Tensor* probs = soft_max(c, logits, nullptr, 1.0f);
                Tensor* sel = top_k(c, probs, (int)n_used);
                Tensor* w =
                    get_rows(c, reshape_3d(c, probs, 1, n_expert, n_tokens), sel);  // [1, n_used, n_tokens]
                w = div(c, w, reshape_3d(c, sum_rows(c, reshape_2d(c, w, n_used, n_tokens)), 1, 1, n_tokens));
                Tensor* x3 = reshape_3d(c, cur, n_embd, 1, n_tokens);
                Tensor* g = mul_mat_id(
                    c, in.add(Type::Q4_K, {n_embd, n_ff, n_expert}, to_type(Type::Q4_K, gate, n_embd)), x3,
                    sel);
                Tensor* u = mul_mat_id(
                    c, in.add(Type::Q8_0, {n_embd, n_ff, n_expert}, to_type(Type::Q8_0, up, n_embd)), x3,
                    sel);
                Tensor* h = use_gelu ? mul(c, gelu(c, g), u) : swiglu(c, g, u);
                Tensor* d = mul_mat_id(
                    c, in.add(Type::Q4_0, {n_ff, n_embd, n_expert}, to_type(Type::Q4_0, down, n_ff)), h, sel);
                d = mul(c, d, w);                                        // [n_embd, n_used, n_tokens]
                return sum_rows(c, cont(c, permute(c, d, 1, 0, 2, 3)));  // the experts' sum per value
            });
        }
    }
}

// gpt-oss's clamped SwiGLU: expf's steps on both (expf_steps.h), so the same bytes.
TEST_CASE("CUDA swiglu_oai equals the CPU with both clamps", "[cuda][elementwise]") {
    for (int64_t ne0 : {1, 31, 256, 1000}) {
        const auto a = randn((size_t)ne0 * 3, 30, 6.0f), b = randn((size_t)ne0 * 3, 31, 6.0f);
        check_identical([&](Inputs& in) {
            return swiglu_oai(in.ctx, in.f32({ne0, 3}, a), in.f32({ne0, 3}, b), 1.702f, 7.0f);
        });
    }
}

// Attention sinks (gpt-oss): soft_max's and flash_attn's, against the CPU's bytes, with sinks below,
// among and above the scores.
TEST_CASE("CUDA soft_max and flash_attn with attention sinks equal the CPU", "[cuda][soft_max][flash_attn]") {
    for (int64_t n_kv : {1, 32, 100}) {
        const int64_t n_q = 5, n_head = 4, hd = 64, hkv = 2;
        const auto a = randn((size_t)(n_kv * n_q * n_head), 32, 3.0f);
        const std::vector<float> sinks = {-30.0f, 0.5f, 2.0f, 12.0f};
        std::vector<float> mask((size_t)(n_kv * n_q), 0.0f);
        for (int64_t t = 0; t < n_q; ++t)
            for (int64_t j = 0; j < n_kv; ++j)
                if ((j + t) % 4 == 3) mask[(size_t)(t * n_kv + j)] = -INFINITY;
        check_identical([&](Inputs& in) {
            return soft_max(in.ctx, in.f32({n_kv, n_q, n_head}, a), in.f32({n_kv, n_q}, mask), 0.25f,
                            in.f32({n_head}, sinks));
        });
        const auto q = randn((size_t)(hd * n_head * n_q), 33), k = randn((size_t)(hd * hkv * n_kv), 34),
                   v = randn((size_t)(hd * hkv * n_kv), 35);
        check_identical_to_reference([&](Inputs& in) {
            Tensor* Q = permute(in.ctx, in.f32({hd, n_head, n_q}, q), 0, 2, 1, 3);
            Tensor* K = in.add(Type::F16, {hd, n_kv, hkv}, to_type(Type::F16, k, hd));
            Tensor* V = in.add(Type::F16, {hd, n_kv, hkv}, to_type(Type::F16, v, hd));
            return flash_attn(in.ctx, Q, K, V, in.f32({n_kv, n_q}, mask), 0.125f, 0.0f, in.f32({n_head}, sinks));
        });
    }
}
