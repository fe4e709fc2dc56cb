// to_float, f16_to_f32_row and axpy_f32 at every level against the reference conversions.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels_test_util.h"

using namespace kernels_test;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b, size_t* first) {
    for (size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], 4) != 0) {
            *first = i;
            return false;
        }
    return true;
}

}  // namespace

TEST_CASE("to_float gives the reference values at every level", "[kernels][to_float]") {
    const Type kTypes[] = {Type::F32,  Type::F16,  Type::BF16, Type::Q4_0,  Type::Q4_1, Type::Q5_0,
                           Type::Q5_1, Type::Q8_0, Type::Q8_1, Type::Q2_K,  Type::Q3_K, Type::Q4_K,
                           Type::Q5_K, Type::Q6_K, Type::Q8_K, Type::IQ4_NL, Type::IQ4_XS, Type::IQ2_XXS,
                           Type::IQ2_XS, Type::IQ2_S, Type::IQ3_XXS, Type::IQ3_S, Type::IQ1_S, Type::IQ1_M,
                           Type::TQ1_0, Type::TQ2_0, Type::MXFP4};
    uint32_t seed = 1;
    for (Type t : kTypes) {
        const int64_t bs = ggml::block_size(t);
        for (IsaLevel level : levels()) {
            LevelScope scope(level);
            const ggml::ToFloatFn f = ggml::cpu::to_float(t);
            REQUIRE(f != nullptr);
            for (int64_t n : {bs, 3 * bs, 17 * bs, int64_t(4096), bs == 1 ? int64_t(45) : bs}) {
                const size_t row = ggml::row_size(t, n);
                const bool random_bytes = is_block_format(t) && t != Type::Q8_K && t != Type::Q8_1;
                const std::vector<uint8_t> x = random_bytes ? random_block_rows(t, n, 1, row, ++seed)
                                                            : quantized_rows(t, n, 1, row, ++seed);
                std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n), -1.0f);
                ggml::type_traits(t).to_float(x.data(), want.data(), n);
                f(x.data(), got.data(), n);
                size_t first = 0;
                INFO(ggml::type_name(t) << " at " << ggml::cpu::isa_level_name(level) << ", n = " << n);
                const bool same = same_bits(want, got, &first);
                INFO("first difference at value " << first);
                CHECK(same);
            }
        }
    }
}

TEST_CASE("f16 and bf16 rows convert exactly for all 65536 encodings, NaN payloads included",
          "[kernels][to_float]") {
    std::vector<uint16_t> h(65536 + 11);
    for (size_t i = 0; i < h.size(); ++i)
        h[i] = uint16_t(i * 40503u);  // a permutation of all values, then some
    const int64_t n = int64_t(h.size());
    std::vector<float> want(h.size()), got(h.size());
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        size_t first = 0;
        ggml::fp16_to_fp32_row(h.data(), want.data(), n);
        ggml::cpu::f16_to_f32_row(h.data(), got.data(), n);
        INFO("f16_to_f32_row at " << ggml::cpu::isa_level_name(level));
        CHECK(same_bits(want, got, &first));
        ggml::cpu::to_float(Type::F16)(h.data(), got.data(), n);
        CHECK(same_bits(want, got, &first));
        ggml::bf16_to_fp32_row(h.data(), want.data(), n);
        ggml::cpu::to_float(Type::BF16)(h.data(), got.data(), n);
        CHECK(same_bits(want, got, &first));
    }
}

TEST_CASE("short f16 rows (8-wide attention heads) convert exactly and write nothing past their end",
          "[kernels][to_float]") {
    std::vector<uint16_t> h(65536);
    for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t(i * 40503u);  // every encoding, NaNs included
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t n : {1, 2, 7, 8, 9, 15, 17, 31}) {
            int bad = 0;
            for (size_t start = 0; start + (size_t)n <= h.size(); start += (size_t)n) {
                float want[32], got[33];
                ggml::fp16_to_fp32_row(h.data() + start, want, n);
                got[n] = -3.0f;  // a sentinel past the end
                ggml::cpu::to_float(Type::F16)(h.data() + start, got, n);
                bad += std::memcmp(want, got, (size_t)n * sizeof(float)) != 0 || got[n] != -3.0f;
            }
            INFO("n = " << n << " at " << ggml::cpu::isa_level_name(level));
            CHECK(bad == 0);
        }
    }
}

TEST_CASE("axpy_f32 rounds the product before the sum, identically at every level", "[kernels][axpy]") {
    for (int64_t n : {0, 1, 7, 8, 15, 16, 17, 33, 1000}) {
        const std::vector<float> x = normal_floats(size_t(n) + 1, uint32_t(n) + 5);
        const std::vector<float> y0 = normal_floats(size_t(n) + 1, uint32_t(n) + 6, 3.0f);
        const float a = 0.7132f;
        std::vector<float> want(y0);
        for (int64_t i = 0; i < n; ++i) {
            volatile float product = a * x[size_t(i)];  // no contraction into an FMA
            want[size_t(i)] = y0[size_t(i)] + product;
        }
        for (IsaLevel level : levels()) {
            LevelScope scope(level);
            std::vector<float> y(y0);
            ggml::cpu::axpy_f32(n, a, x.data(), y.data());
            size_t first = 0;
            INFO("n = " << n << " at " << ggml::cpu::isa_level_name(level));
            CHECK(same_bits(want, y, &first));  // including the untouched element past n
        }
    }
}
