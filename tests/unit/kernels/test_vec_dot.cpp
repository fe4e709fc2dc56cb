// vec_dot at every level against the scalar reference: bit for bit for the block formats, within a few
// ulps per 8 values for the float formats. Rows of 1, 3 and 17 blocks and of 4096 values.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels_test_util.h"

using namespace kernels_test;

namespace {

uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

std::vector<int64_t> lengths(Type t) {
    const int64_t bs = ggml::block_size(t);
    std::vector<int64_t> n = {bs, 3 * bs, 17 * bs, 4096};
    if (bs == 1) n.insert(n.end(), {15, 16, 31, 33, 100});  // every tail length class
    return n;
}

// An activation row of the weight type's paired type, from the reference quantizer.
std::vector<uint8_t> activation_row(Type weight, int64_t n, uint32_t seed) {
    return quantized_rows(activation_type(weight), n, 1, ggml::row_size(activation_type(weight), n), seed);
}

// Sum of |x_i * y_i| over the dequantized rows.
double magnitude(Type t, const uint8_t* x, const uint8_t* y, int64_t n) {
    std::vector<float> xf(static_cast<size_t>(n)), yf(static_cast<size_t>(n));
    ggml::type_traits(t).to_float(x, xf.data(), n);
    ggml::type_traits(activation_type(t)).to_float(y, yf.data(), n);
    double m = 0;
    for (int64_t i = 0; i < n; ++i) m += std::fabs(double(xf[size_t(i)]) * double(yf[size_t(i)]));
    return m;
}

}  // namespace

TEST_CASE("vec_dot of block formats equals the reference bit for bit at every level", "[kernels][vec_dot]") {
    uint32_t seed = 1;
    for (Type t : weight_types()) {
        if (!is_block_format(t)) continue;
        const auto ref = ggml::type_traits(t).vec_dot_ref;
        for (IsaLevel level : levels()) {
            LevelScope scope(level);
            const ggml::VecDotFn dot = ggml::cpu::vec_dot(t);
            REQUIRE(dot != nullptr);
            for (int64_t n : lengths(t)) {
                const size_t row = ggml::row_size(t, n);
                // Rows from the quantizer and rows of random bytes (every level and scale pattern).
                for (int random_bytes = 0; random_bytes < 2; ++random_bytes) {
                    INFO(ggml::type_name(t) << " at " << ggml::cpu::isa_level_name(level) << ", n = " << n
                                            << (random_bytes ? ", random bytes" : ", quantized"));
                    const std::vector<uint8_t> x = random_bytes ? random_block_rows(t, n, 1, row, ++seed)
                                                                : quantized_rows(t, n, 1, row, ++seed);
                    const std::vector<uint8_t> y = activation_row(t, n, ++seed);
                    float got = -1, want = -2;
                    dot(n, &got, x.data(), y.data());
                    ref(n, &want, x.data(), y.data());
                    REQUIRE(std::isfinite(want));
                    CHECK(bits_of(got) == bits_of(want));
                }
            }
        }
    }
}

TEST_CASE("vec_dot of float formats is within a few ulps per 8 values of the reference",
          "[kernels][vec_dot]") {
    uint32_t seed = 1000;
    for (Type t : {Type::F32, Type::F16, Type::BF16}) {
        const auto ref = ggml::type_traits(t).vec_dot_ref;
        for (IsaLevel level : levels()) {
            LevelScope scope(level);
            const ggml::VecDotFn dot = ggml::cpu::vec_dot(t);
            REQUIRE(dot != nullptr);
            for (int64_t n : lengths(t)) {
                INFO(ggml::type_name(t) << " at " << ggml::cpu::isa_level_name(level) << ", n = " << n);
                const std::vector<uint8_t> x = float_rows(t, n, 1, ggml::row_size(t, n), ++seed);
                const std::vector<uint8_t> y = float_rows(t, n, 1, ggml::row_size(t, n), ++seed);
                float got = 0, want = 0;
                dot(n, &got, x.data(), y.data());
                ref(n, &want, x.data(), y.data());
                // Lane-parallel float sums: about one rounding per 8 values of a lane plus the final sum.
                const double tol = double(n / 8 + 16) * std::ldexp(magnitude(t, x.data(), y.data(), n), -24);
                CHECK(std::fabs(double(got) - double(want)) <= tol);
                if (level == IsaLevel::Scalar) CHECK(bits_of(got) == bits_of(want));
            }
        }
    }
}

TEST_CASE("vec_dot reads rows at any 2-byte (block formats) or 4-byte (f32) alignment",
          "[kernels][vec_dot]") {
    const int64_t n = 4 * ggml::QK_K;
    uint32_t seed = 2000;
    for (Type t : weight_types()) {
        const size_t row = ggml::row_size(t, n), arow = ggml::row_size(activation_type(t), n);
        const size_t shift = t == Type::F32 ? 4 : 2;
        for (IsaLevel level : levels()) {
            LevelScope scope(level);
            INFO(ggml::type_name(t) << " at " << ggml::cpu::isa_level_name(level));
            const std::vector<uint8_t> x = is_block_format(t) ? random_block_rows(t, n, 1, row, ++seed)
                                                              : float_rows(t, n, 1, row, ++seed);
            const std::vector<uint8_t> y = quantized_rows(activation_type(t), n, 1, arow, ++seed);
            // The same rows moved off their allocation's alignment (Q8_K activations keep 4 bytes).
            std::vector<uint8_t> xs(row + 64), ys(arow + 64);
            std::memcpy(xs.data() + shift, x.data(), row);
            std::memcpy(ys.data() + 4, y.data(), arow);
            float aligned = 0, shifted = 1;
            ggml::cpu::vec_dot(t)(n, &aligned, x.data(), y.data());
            ggml::cpu::vec_dot(t)(n, &shifted, xs.data() + shift, ys.data() + 4);
            CHECK(bits_of(aligned) == bits_of(shifted));
        }
    }
}
