// mul_mat on CUDA for every weight type, at decode (N = 1) and prompt (N = 37) sizes, against the CPU.
// Block formats must match bit for bit (both backends reproduce the reference dot products); float
// weights agree to rounding of a double sum. A token's output must not depend on the batch around it.
#include "cuda_test_util.h"

using namespace cuda_test;

namespace {

const Type kWeightTypes[] = {Type::F32,  Type::F16,  Type::BF16, Type::Q4_0,  Type::Q4_1,
                             Type::Q5_0, Type::Q5_1, Type::Q8_0, Type::Q2_K,  Type::Q3_K,
                             Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::IQ4_NL};

bool is_block_type(Type t) {
    return block_size(t) > 1;
}

Build mul_mat_case(Type t, int64_t K, int64_t M, int64_t N, const std::vector<float>& w,
                   const std::vector<float>& x) {
    return [=, &w, &x](Inputs& in) {
        return mul_mat(in.ctx, in.add(t, {K, M}, to_type(t, w, K)), in.f32({K, N}, x));
    };
}

}  // namespace

TEST_CASE("CUDA mul_mat matches the CPU for every weight type, decode and prompt sizes", "[cuda][mul_mat]") {
    for (Type t : kWeightTypes) {
        const int64_t K = block_size(t) == 256 ? 512 : 320;  // ragged block counts per warp step
        for (int64_t N : {1, 37}) {
            for (int64_t M : {1, 67}) {
                INFO("type " << type_name(t) << " K " << K << " M " << M << " N " << N);
                const auto w = randn((size_t)(K * M), 20), x = randn((size_t)(K * N), 21);
                if (is_block_type(t))
                    check_identical(mul_mat_case(t, K, M, N, w, x));
                else
                    check_close(mul_mat_case(t, K, M, N, w, x), kUlpTolFloatDot);
            }
        }
    }
}

TEST_CASE("CUDA mul_mat quantizes awkward activation blocks as the CPU does", "[cuda][mul_mat]") {
    // Blocks of zeros (scale 0), of one value, of tiny values, of large ones, and values on rounding ties
    // (k + 0.5 after scaling by 127 / amax), for the Q8_0, Q8_1 and Q8_K activation formats.
    const int64_t K = 512, M = 5, N = 3;
    std::vector<float> x = randn((size_t)(K * N), 26);
    for (int64_t j = 0; j < 32; ++j) {
        x[(size_t)j] = 0.0f;                                            // block 0 of column 0: zeros
        x[(size_t)(32 + j)] = 3.0f;                                     // block 1: one value
        x[(size_t)(64 + j)] = std::ldexp(1.0f, -120) * (float)(j + 1);  // block 2: tiny (scale 0 in f16)
        x[(size_t)(96 + j)] = (j % 2 ? -1.0f : 1.0f) * 3e4f;            // block 3: large (f16 scale 236)
        x[(size_t)(128 + j)] = (float)(j % 8) + 0.5f;                   // block 4: ties
    }
    x[(size_t)(128 + 31)] = 127.0f;  // amax 127: scale 1, the other values stay on their ties
    const auto w = randn((size_t)(K * M), 27);
    for (Type t : {Type::Q4_0, Type::Q8_0, Type::Q4_1, Type::Q5_1, Type::Q4_K}) {
        INFO("type " << type_name(t));
        check_identical(mul_mat_case(t, K, M, N, w, x));
    }
}

TEST_CASE("CUDA mul_mat at model-like shapes", "[cuda][mul_mat]") {
    for (Type t : {Type::Q4_0, Type::Q8_0, Type::Q4_K, Type::Q6_K, Type::F16}) {
        for (auto [K, M] : {std::pair<int64_t, int64_t>{2048, 256}, {5632, 64}}) {
            INFO("type " << type_name(t) << " K " << K << " M " << M);
            const auto w = randn((size_t)(K * M), 22, 0.05f), x = randn((size_t)(K * 3), 23);
            if (is_block_type(t))
                check_identical(mul_mat_case(t, K, M, 3, w, x));
            else
                check_close(mul_mat_case(t, K, M, 3, w, x), kUlpTolFloatDot);
        }
    }
}

TEST_CASE("CUDA mul_mat broadcasts weight planes (attention scores with GQA)", "[cuda][mul_mat]") {
    // K [hd, n_kv, n_head_kv] from a cache view, Q permuted [hd, n, n_head].
    const int64_t hd = 64, n_kv = 40, hkv = 2, n = 6, h = 8;
    const auto k = randn((size_t)(hd * hkv * n_kv), 24), q = randn((size_t)(hd * h * n), 25);
    for (Type t : {Type::F16, Type::Q8_0, Type::Q4_0, Type::F32}) {
        INFO("cache type " << type_name(t));
        Build b = [&](Inputs& in) {
            Tensor* cache = in.add(t, {hd * hkv, n_kv}, to_type(t, k, hd * hkv));
            Tensor* K = view_3d(in.ctx, cache, hd, n_kv, hkv, cache->nb[1], row_size(t, hd), 0);
            Tensor* Q = permute(in.ctx, in.f32({hd, h, n}, q), 0, 2, 1, 3);
            return mul_mat(in.ctx, K, Q);
        };
        if (is_block_type(t))
            check_identical(b);
        else
            check_close(b, kUlpTolFloatDot);
    }
}

TEST_CASE("CUDA mul_mat: a column's result does not depend on the batch", "[cuda][mul_mat][invariance]") {
    Backend& cuda = cuda_backend();
    for (Type t : kWeightTypes) {
        INFO("type " << type_name(t));
        const int64_t K = block_size(t) == 256 ? 768 : 416, M = 45, N = 37;
        const auto w = randn((size_t)(K * M), 26), x = randn((size_t)(K * N), 27);
        const auto all = floats_of(run_cuda(mul_mat_case(t, K, M, N, w, x), cuda));
        for (int64_t c : {0, 8, 36}) {
            const std::vector<float> col(x.begin() + c * K, x.begin() + (c + 1) * K);
            const auto one = floats_of(run_cuda(mul_mat_case(t, K, M, 1, w, col), cuda));
            for (int64_t m = 0; m < M; ++m) REQUIRE(one[(size_t)m] == all[(size_t)(c * M + m)]);
        }
    }
}

TEST_CASE("CUDA mul_mat with activations already in the paired type", "[cuda][mul_mat]") {
    const int64_t K = 256, M = 9, N = 4;
    const auto w = randn((size_t)(K * M), 28), x = randn((size_t)(K * N), 29);
    for (Type t : {Type::Q8_0, Type::Q4_K, Type::F16}) {
        const Type vdt = type_traits(t).vec_dot_type;
        INFO("type " << type_name(t));
        Build b = [&](Inputs& in) {
            return mul_mat(in.ctx, in.add(t, {K, M}, to_type(t, w, K)),
                           in.add(vdt, {K, N}, to_type(vdt, x, K)));
        };
        if (is_block_type(t))
            check_identical(b);
        else
            check_close(b, kUlpTolFloatDot);
    }
}

TEST_CASE("CUDA mul_mat_t (attention values) matches the CPU", "[cuda][mul_mat_t]") {
    // V [hd, n_kv, h_kv] cache view, weights [n_kv, n, h] with masked (zero) cells.
    for (Type t : {Type::F16, Type::F32, Type::BF16}) {
        for (int64_t n_kv : {7, 64, 300}) {
            INFO("type " << type_name(t) << " n_kv " << n_kv);
            const int64_t hd = 64, hkv = 2, n = 5, h = 4;
            const auto v = randn((size_t)(hd * hkv * n_kv), 30);
            auto w = randn((size_t)(n_kv * n * h), 31, 0.2f);
            for (size_t i = 0; i < w.size(); i += 3) w[i] = 0.0f;
            check_close(
                [&](Inputs& in) {
                    Tensor* cache = in.add(t, {hd * hkv, n_kv}, to_type(t, v, hd * hkv));
                    Tensor* V = view_3d(in.ctx, cache, hd, n_kv, hkv, cache->nb[1], row_size(t, hd), 0);
                    return mul_mat_t(in.ctx, V, in.f32({n_kv, n, h}, w));
                },
                kUlpTol);
        }
    }
}

TEST_CASE("CUDA mul_mat through cuBLAS for prompt batches (opt-in)", "[cuda][mul_mat][cublas]") {
    require_cuda();
    CudaOptions opt;
    opt.cublas_prefill = true;
    auto cublas = make_cuda_backend(0, opt);
    for (Type t : {Type::Q4_0, Type::Q8_0, Type::Q4_K, Type::F16, Type::F32}) {
        INFO("type " << type_name(t));
        const int64_t K = 512, M = 96, N = 40;
        const auto w = randn((size_t)(K * M), 32, 0.1f), x = randn((size_t)(K * N), 33);
        const auto build = mul_mat_case(t, K, M, N, w, x);
        const auto ref = floats_of(run_cpu(build));
        const auto got = floats_of(run_cuda(build, *cublas));
        // f16 weights and activations: about 3 decimal digits.
        REQUIRE(max_rel_error(got, ref) <= 1e-2);
    }
    // Small batches keep the reference kernels even with cuBLAS enabled.
    const auto w = randn(256 * 8, 34), x = randn(256 * 2, 35);
    const auto small = mul_mat_case(Type::Q8_0, 256, 8, 2, w, x);
    REQUIRE(run_cuda(small, *cublas) == run_cpu(small));
}
