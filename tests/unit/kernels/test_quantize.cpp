// quantize_activations at every level writes exactly the bytes of the reference quantizers: rounding
// ties, sign of the largest value, zero, tiny and huge blocks, and every float class for f16/bf16.
#include <catch2/catch.hpp>
#include <cfloat>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels_test_util.h"

using namespace kernels_test;

namespace {

float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Inputs in blocks of 256 values (a multiple of every block size), each block of one kind.
std::vector<float> tricky_input(uint32_t seed) {
    std::vector<float> x;
    auto block = [&](auto value) {
        for (int j = 0; j < 256; ++j) x.push_back(value(j));
    };
    const std::vector<float> g = normal_floats(256 * 4, seed);
    block([&](int j) { return g[size_t(j)]; });                                  // normal
    block([&](int j) { return g[size_t(256 + j)] * 1e-3f; });                    // small
    block([&](int j) { return g[size_t(512 + j)] * 3e4f; });                     // large
    block([](int) { return 0.0f; });                                             // zero
    block([](int j) { return j % 7 ? -0.0f : 0.0f; });                           // signed zeros
    block([](int j) { return j % 32 == 0 ? 127.0f : float(j % 32) - 15.5f; });   // q8_0 ties: d = 1
    block([](int j) { return j % 32 == 0 ? 254.0f : float(j % 32) * 2 - 31; });  // ties at d = 2
    block([](int j) { return j == 0 ? -127.0f : float(j % 64) * 0.5f - 16; });   // q8_K ties, max < 0
    block([](int j) { return j == 3 ? 5.0f : j == 9 ? -5.0f : 1.0f; });          // first max wins
    block([](int j) { return j == 9 ? 5.0f : j == 3 ? -5.0f : 1.0f; });
    block([](int j) { return from_bits(uint32_t(1 + 977 * j)); });  // denormals
    block([](int j) { return j % 2 ? 1e-39f : -3e-39f; });          // scale overflows
    block([&](int j) { return g[size_t(768 + j)] * (j < 128 ? 1e-20f : 1e20f); });
    block([](int j) { return float(j % 9) - 4.0f; });     // integers
    block([](int j) { return 0.7f + 0.0f * float(j); });  // constant
    block([](int j) { return j % 16 == 5 ? 65504.0f : -0.25f; });
    return x;
}

bool same_bytes(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, size_t* first) {
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) {
            *first = i;
            return false;
        }
    return true;
}

void check_quantizer(Type t, const std::vector<float>& x, int64_t n) {
    const auto ref = ggml::type_traits(t).from_float_ref;
    const size_t bytes = ggml::row_size(t, n);
    std::vector<uint8_t> want(bytes + 16, 0xAB), got(bytes + 16, 0xCD);
    ref(x.data(), want.data(), n);
    ggml::cpu::quantize_activations(t)(x.data(), got.data(), n);
    got.resize(bytes);
    want.resize(bytes);
    size_t first = 0;
    INFO(ggml::type_name(t) << " at " << ggml::cpu::isa_level_name(ggml::cpu::isa_level()) << ", n = " << n);
    const bool same = same_bytes(want, got, &first);
    INFO("first difference at byte " << first);
    CHECK(same);
}

}  // namespace

TEST_CASE("activation quantizers write the reference bytes at every level", "[kernels][quantize]") {
    const std::vector<float> x = tricky_input(7);
    for (Type t : {Type::Q8_0, Type::Q8_1, Type::Q8_K, Type::F16, Type::BF16, Type::F32}) {
        for (IsaLevel level : levels()) {
            LevelScope scope(level);
            REQUIRE(ggml::cpu::quantize_activations(t) != nullptr);
            check_quantizer(t, x, int64_t(x.size()));
            // Fresh random rows of several lengths (odd ones for the float formats' tails).
            const int64_t bs = ggml::block_size(t);
            for (int64_t n : {bs, 3 * bs, 17 * bs, int64_t(4096), bs == 1 ? int64_t(37) : bs})
                check_quantizer(t, normal_floats(size_t(n), uint32_t(n) * 31 + uint32_t(level)), n);
        }
    }
}

TEST_CASE("f16 and bf16 activation conversions match the reference for every class of float",
          "[kernels][quantize]") {
    std::vector<float> x;
    // A stride through all bit patterns, including NaNs (signalling and quiet) and infinities.
    for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 65521) x.push_back(from_bits(uint32_t(u)));
    // Every half, its neighbours in float, and the midpoints to the next half (rounding ties).
    for (uint32_t h = 0; h < 0x7c00; ++h) {
        const float f = ggml::fp16_to_fp32(uint16_t(h)), next = ggml::fp16_to_fp32(uint16_t(h + 1));
        const float mid = f + (next - f) / 2;
        for (float v : {f, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
            x.push_back(v);
            x.push_back(-v);
        }
    }
    for (float v : {FLT_MAX, -FLT_MAX, FLT_MIN, std::numeric_limits<float>::infinity(), 65520.0f, 65519.99f})
        x.push_back(v);
    for (uint32_t u : {0x7f800001u, 0x7fbfffffu, 0xffc00001u, 0x7fc00000u, 0x7f802000u, 0x7f800fffu})
        x.push_back(from_bits(u));
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        check_quantizer(Type::F16, x, int64_t(x.size()));
        check_quantizer(Type::BF16, x, int64_t(x.size()));
    }
}
