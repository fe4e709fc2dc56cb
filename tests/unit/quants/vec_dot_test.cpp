// Reference dot products equal dequantize-then-dot up to float rounding, for every weight type.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ggml/quants.h"
#include "random_blocks.h"
#include "test_data.h"

using ggml::Type;
using quant_test::Kind;

namespace {

struct Row {
    std::vector<uint8_t> bytes;
    std::vector<float> values;  // dequantized
};

// x quantized by the reference quantizer; types without one get random blocks instead.
Row quantized(Type t, const std::vector<float>& x, uint32_t seed = 1) {
    const ggml::TypeTraits& tt = ggml::type_traits(t);
    const auto n = int64_t(x.size());
    Row r{std::vector<uint8_t>(ggml::row_size(t, n)), std::vector<float>(x.size())};
    if (tt.from_float_ref) {
        tt.from_float_ref(x.data(), r.bytes.data(), n);
    } else {
        std::mt19937 rng(seed);
        for (size_t b = 0; b < r.bytes.size(); b += tt.type_size) quant_test::randomize_block(t, r.bytes.data() + b, rng);
    }
    tt.to_float(r.bytes.data(), r.values.data(), n);
    return r;
}

uint16_t half_at(const Row& r, size_t offset) {
    uint16_t h;
    std::memcpy(&h, r.bytes.data() + offset, 2);
    return h;
}

// |offset| subtracted from value i of a weight row with mins (x = d q + m or d sc q - dmin m): the
// dot product computes that part separately, so its rounding scales with it, not with |x|.
double offset_of(Type t, const Row& x, size_t i) {
    const size_t stride = ggml::type_size(t);
    const size_t block = i / size_t(ggml::block_size(t)), within = i % size_t(ggml::block_size(t));
    const uint8_t* b = x.bytes.data() + block * stride;
    switch (t) {
        case Type::Q4_1:
        case Type::Q5_1:
            return std::fabs(ggml::fp16_to_fp32(half_at(x, block * stride + 2)));
        case Type::Q2_K: {
            const auto* q = reinterpret_cast<const ggml::BlockQ2_K*>(b);
            return ggml::fp16_to_fp32(q->dmin) * (q->scales[within / 16] >> 4);
        }
        case Type::Q4_K:
        case Type::Q5_K: {
            uint8_t sc[8], mn[8];
            ggml::unpack_k4_scales(b + 4, sc, mn);  // both start with d, dmin, scales
            return ggml::fp16_to_fp32(half_at(x, block * stride + 2)) * mn[within / 32];
        }
        default:
            return 0.0;
    }
}

// Rounding slack of the block-by-block float accumulation (a few roundings per block plus one per
// block added), plus the half rounding of the q8_1 sum s = d * sum(q) that q4_1/q5_1 use.
double tolerance(Type t, const Row& x, const Row& y, int64_t blocks) {
    double magnitude = 0;
    for (size_t i = 0; i < x.values.size(); ++i)
        magnitude += (std::fabs(double(x.values[i])) + offset_of(t, x, i)) * std::fabs(double(y.values[i]));
    // Float types sum exact products in double: only the final rounding to float remains.
    if (!ggml::type_traits(t).is_quantized) return std::ldexp(magnitude, -23);
    double tol = double(blocks + 4) * std::ldexp(magnitude, -23);
    if (t == Type::Q4_1 || t == Type::Q5_1) {
        for (int64_t b = 0; b < blocks; ++b) {
            const double m = std::fabs(ggml::fp16_to_fp32(half_at(x, size_t(b) * ggml::type_size(t) + 2)));
            const double s =
                std::fabs(ggml::fp16_to_fp32(half_at(y, size_t(b) * sizeof(ggml::BlockQ8_1) + 2)));
            tol += m * (s * std::ldexp(1.0, -11) + std::ldexp(1.0, -25));
        }
    }
    return tol;
}

}  // namespace

TEST_CASE("vec_dot_ref matches the dot product of the dequantized rows", "[vec_dot]") {
    const Type weights[] = {Type::F32,  Type::F16,  Type::BF16, Type::Q4_0,  Type::Q4_1,
                            Type::Q5_0, Type::Q5_1, Type::Q8_0, Type::Q2_K,  Type::Q3_K,
                            Type::Q4_K, Type::Q5_K, Type::Q6_K, Type::IQ4_NL,
                            Type::IQ4_XS, Type::IQ2_XXS, Type::IQ2_XS, Type::IQ2_S, Type::IQ3_XXS,
                            Type::IQ3_S, Type::IQ1_S, Type::IQ1_M, Type::TQ1_0, Type::TQ2_0, Type::MXFP4};
    for (Type t : weights) {
        const ggml::TypeTraits& tt = ggml::type_traits(t);
        for (int64_t n : {tt.block_size, 3 * tt.block_size, 17 * tt.block_size, int64_t(4096)}) {
            const int64_t blocks = n / tt.block_size;
            for (Kind kind : {Kind::Normal, Kind::Outlier, Kind::MixedScales, Kind::Positive}) {
                for (uint64_t seed = 1; seed <= 3; ++seed) {
                    const Row x = quantized(t, quant_test::make_row(seed, kind, n), uint32_t(seed + 10 * int(kind)));
                    const Row y =
                        quantized(tt.vec_dot_type, quant_test::make_row(seed + 100, Kind::Normal, n));
                    double exact = 0;
                    for (size_t i = 0; i < size_t(n); ++i) exact += double(x.values[i]) * y.values[i];
                    float s = NAN;
                    tt.vec_dot_ref(n, &s, x.bytes.data(), y.bytes.data());
                    INFO(tt.name << ", " << n << " values, kind " << int(kind) << ", seed " << seed);
                    REQUIRE(std::fabs(double(s) - exact) <= tolerance(t, x, y, blocks));
                }
            }
        }
    }
}

TEST_CASE("vec_dot_ref of a 4096-value row against itself is positive and exact in its integer part",
          "[vec_dot]") {
    // Q8_0 against itself: the block sums of squares are integers, so the result is the float sum of
    // (d * d) * isum in block order; recompute that order here and compare bit for bit.
    const std::vector<float> v = quant_test::make_row(5, Kind::Normal, 4096);
    std::vector<ggml::BlockQ8_0> q(4096 / 32);
    ggml::quantize_row_q8_0_ref(v.data(), q.data(), 4096);
    float expect = 0;
    for (const auto& b : q) {
        int32_t isum = 0;
        for (int8_t c : b.qs) isum += c * c;
        const float d = ggml::fp16_to_fp32(b.d);
        expect += (d * d) * float(isum);
    }
    float s = 0;
    ggml::vec_dot_q8_0_q8_0_ref(4096, &s, q.data(), q.data());
    CHECK(s == expect);
    CHECK(s > 0);
}
