// IEEE half and bfloat16 <-> float, round to nearest even, exact for subnormals, inf and NaN.
#include <cstring>

#include "ggml/quants.h"
#include "ggml/types.h"

namespace ggml {

static uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) return float_of(sign | 0x7f800000 | (mant << 13));  // inf, NaN keeps its payload
    if (exp != 0) return float_of(sign | ((exp + 127 - 15) << 23) | (mant << 13));
    // Zero or subnormal: mant * 2^-24 is exact in float.
    const float mag = float(mant) * float_of(0x33800000);  // 2^-24
    return sign ? -mag : mag;
}

uint16_t fp32_to_fp16(float f) {
    const uint32_t u = bits_of(f);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000);
    const uint32_t a = u & 0x7fffffff;
    if (a > 0x7f800000) return sign | 0x7e00 | uint16_t((a >> 13) & 0x3ff);  // NaN: quiet, keep payload
    if (a >= 0x477ff000) return sign | 0x7c00;  // >= 65520 (midpoint of 65504 and 65536): inf
    if (a >= 0x38800000) {                      // normal half (>= 2^-14): rebias, round 13 bits away
        const uint32_t v = a - ((127 - 15) << 23);
        return sign | uint16_t((v + 0xfff + ((v >> 13) & 1)) >> 13);
    }
    if (a <= 0x33000000) return sign;  // <= 2^-25 (half the smallest subnormal, a tie to even 0)
    // Subnormal half: value / 2^-24 = mantissa >> (126 - exponent), rounded to nearest even. A
    // carry into bit 10 yields the smallest normal, which is the correct encoding.
    const uint32_t m = (a & 0x7fffff) | 0x800000;
    const int shift = 126 - int(a >> 23);  // 14..24
    const uint32_t q = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    return sign | uint16_t(q + (rest > half || (rest == half && (q & 1))));
}

float bf16_to_fp32(uint16_t h) {
    return float_of(uint32_t(h) << 16);
}

uint16_t fp32_to_bf16(float f) {
    const uint32_t u = bits_of(f);
    if ((u & 0x7fffffff) > 0x7f800000) return uint16_t((u >> 16) | 0x40);  // NaN stays NaN (quiet)
    return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

void fp16_to_fp32_row(const void* x, float* y, int64_t n) {
    const auto* h = static_cast<const uint16_t*>(x);
    for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(h[i]);
}

void fp32_to_fp16_row(const float* x, void* y, int64_t n) {
    auto* h = static_cast<uint16_t*>(y);
    for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(x[i]);
}

void bf16_to_fp32_row(const void* x, float* y, int64_t n) {
    const auto* h = static_cast<const uint16_t*>(x);
    for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_fp32(h[i]);
}

void fp32_to_bf16_row(const float* x, void* y, int64_t n) {
    auto* h = static_cast<uint16_t*>(y);
    for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_bf16(x[i]);
}

void f32_copy_row(const void* x, float* y, int64_t n) {
    std::memcpy(y, x, size_t(n) * sizeof(float));
}

void f32_from_float_row(const float* x, void* y, int64_t n) {
    std::memcpy(y, x, size_t(n) * sizeof(float));
}

}  // namespace ggml
