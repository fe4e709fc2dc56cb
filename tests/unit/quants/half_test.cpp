// fp16 and bf16 conversions: exhaustive over all 65536 encodings, plus every rounding boundary.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include "ggml/types.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "test_data.h"

using ggml::bf16_to_fp32;
using ggml::fp16_to_fp32;
using ggml::fp32_to_bf16;
using ggml::fp32_to_fp16;

namespace {

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// The value of a finite half computed independently, in double.
double half_value(uint16_t h) {
    const int exp = (h >> 10) & 0x1f;
    const int mant = h & 0x3ff;
    const double mag = exp == 0 ? std::ldexp(double(mant), -24) : std::ldexp(1.0 + mant / 1024.0, exp - 15);
    return (h & 0x8000) ? -mag : mag;
}

bool is_nan_half(uint16_t h) {
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
}

}  // namespace

TEST_CASE("fp16 to fp32 is exact for all 65536 halves", "[half]") {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = fp16_to_fp32(uint16_t(h));
        INFO("half 0x" << std::hex << h);
        if (is_nan_half(uint16_t(h))) {
            REQUIRE(std::isnan(f));
            REQUIRE(std::signbit(f) == bool(h & 0x8000));
        } else if ((h & 0x7fff) == 0x7c00) {
            REQUIRE(std::isinf(f));
            REQUIRE(std::signbit(f) == bool(h & 0x8000));
        } else {
            REQUIRE(double(f) == half_value(uint16_t(h)));
            REQUIRE(std::signbit(f) == bool(h & 0x8000));  // -0 stays -0
        }
    }
}

TEST_CASE("fp16 round trip is the identity, NaN stays NaN", "[half]") {
    for (uint32_t h = 0; h < 65536; ++h) {
        const uint16_t back = fp32_to_fp16(fp16_to_fp32(uint16_t(h)));
        INFO("half 0x" << std::hex << h << " back 0x" << back);
        if (is_nan_half(uint16_t(h))) {
            REQUIRE(is_nan_half(back));
            REQUIRE(back == (h | 0x200));  // quieted, payload and sign kept
        } else {
            REQUIRE(back == h);
        }
    }
}

TEST_CASE("fp32 to fp16 rounds to nearest even at every boundary", "[half]") {
    // Between each pair of neighbouring finite halves (subnormals included), the midpoint is exact in
    // float; it must go to the even one, and one float ulp either side to the nearer one.
    for (uint32_t h = 0; h < 0x7bff; ++h) {
        for (uint32_t sign : {0u, 0x8000u}) {
            const double lo = half_value(uint16_t(h)), hi = half_value(uint16_t(h + 1));
            const float mid = float((lo + hi) / 2);
            REQUIRE(double(mid) == (lo + hi) / 2);
            const float s = sign ? -1.0f : 1.0f;
            const uint16_t even = uint16_t((h % 2 == 0 ? h : h + 1) | sign);
            INFO("between 0x" << std::hex << h << " and 0x" << h + 1);
            REQUIRE(fp32_to_fp16(s * mid) == even);
            REQUIRE(fp32_to_fp16(s * std::nextafter(mid, 0.0f)) == (h | sign));
            REQUIRE(fp32_to_fp16(s * std::nextafter(mid, 1e9f)) == ((h + 1) | sign));
        }
    }
}

TEST_CASE("fp32 to fp16 handles overflow, underflow, inf and NaN", "[half]") {
    const float inf = std::numeric_limits<float>::infinity();
    CHECK(fp32_to_fp16(65504.0f) == 0x7bff);
    CHECK(fp32_to_fp16(std::nextafter(65520.0f, 0.0f)) == 0x7bff);
    CHECK(fp32_to_fp16(65520.0f) == 0x7c00);  // tie between 65504 (odd) and 65536: overflows
    CHECK(fp32_to_fp16(1e10f) == 0x7c00);
    CHECK(fp32_to_fp16(-std::numeric_limits<float>::max()) == 0xfc00);
    CHECK(fp32_to_fp16(inf) == 0x7c00);
    CHECK(fp32_to_fp16(-inf) == 0xfc00);
    CHECK(fp32_to_fp16(0.0f) == 0x0000);
    CHECK(fp32_to_fp16(-0.0f) == 0x8000);
    CHECK(fp32_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);  // tie with 0 and 2^-24: even is 0
    CHECK(fp32_to_fp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
    CHECK(fp32_to_fp16(std::ldexp(1.0f, -26)) == 0x0000);
    CHECK(fp32_to_fp16(-std::numeric_limits<float>::denorm_min()) == 0x8000);
    CHECK(fp32_to_fp16(std::ldexp(1023.5f, -24)) == 0x0400);  // rounds up into the smallest normal
    CHECK(fp32_to_fp16(std::nanf("")) == 0x7e00);
    const uint16_t nan_payload = fp32_to_fp16(from_bits(0xffa00000));  // signalling NaN, sign set
    CHECK((nan_payload & 0xfc00) == 0xfc00);
    CHECK((nan_payload & 0x3ff) != 0);
    CHECK(fp32_to_fp16(from_bits(0x7f800001)) != 0x7c00);  // a payload below the kept bits stays NaN
    CHECK(is_nan_half(fp32_to_fp16(from_bits(0x7f800001))));
}

#if defined(__x86_64__)
__attribute__((target("f16c"))) static uint16_t hardware_fp16(float f) {
    return uint16_t(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}

TEST_CASE("fp32 to fp16 agrees with the F16C instruction on random floats", "[half]") {
    if (!__builtin_cpu_supports("f16c")) {
        WARN("no F16C on this CPU: cross-check skipped");
        return;
    }
    quant_test::Rng rng(42);
    for (int i = 0; i < (1 << 18); ++i) {
        const float f = from_bits(uint32_t(rng.next()));
        if (std::isnan(f)) continue;  // hardware NaN payloads are not specified the same way
        INFO("float bits 0x" << std::hex << bits(f));
        REQUIRE(fp32_to_fp16(f) == hardware_fp16(f));
    }
}
#endif

TEST_CASE("bf16 round trip is exact for all 65536 encodings, NaN stays NaN", "[half]") {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = bf16_to_fp32(uint16_t(h));
        INFO("bf16 0x" << std::hex << h);
        REQUIRE(bits(f) == h << 16);
        const uint16_t back = fp32_to_bf16(f);
        if (std::isnan(f)) {
            REQUIRE(std::isnan(bf16_to_fp32(back)));
            REQUIRE(back == (h | 0x40));
        } else {
            REQUIRE(back == h);
        }
    }
}

TEST_CASE("fp32 to bf16 rounds to nearest even at every boundary", "[half]") {
    for (uint32_t h = 0; h < 0x7f7f; ++h) {
        for (uint32_t sign : {0u, 0x8000u}) {
            const uint32_t mid = ((h | sign) << 16) | 0x8000;  // exactly between h and h + 1
            const uint16_t even = uint16_t((h % 2 == 0 ? h : h + 1) | sign);
            INFO("between 0x" << std::hex << h << " and 0x" << h + 1);
            REQUIRE(fp32_to_bf16(from_bits(mid)) == even);
            REQUIRE(fp32_to_bf16(from_bits(mid - 1)) == (h | sign));
            REQUIRE(fp32_to_bf16(from_bits(mid + 1)) == ((h + 1) | sign));
        }
    }
    CHECK(fp32_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);  // above the last midpoint
    CHECK(fp32_to_bf16(from_bits(0x00008000)) == 0x0000);              // subnormals are not flushed:
    CHECK(fp32_to_bf16(from_bits(0x00008001)) == 0x0001);              // they round like the rest
    CHECK(fp32_to_bf16(from_bits(0x00018000)) == 0x0002);
    CHECK(fp32_to_bf16(from_bits(0x7f800001)) == 0x7fc0);  // a NaN with a low payload stays NaN
    CHECK(fp32_to_bf16(from_bits(0xff80ffff)) == 0xffc0);
    CHECK(fp32_to_bf16(-std::numeric_limits<float>::infinity()) == 0xff80);
}
