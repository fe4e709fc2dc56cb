// IEEE half and bfloat16 <-> float, bit for bit as ggml/src/quants/half.cpp (round to nearest even,
// subnormals, inf, NaN payloads).
#pragma once

#include "hd.h"

namespace ggml::cuda {

GGML_HD float h2f(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) return as_float(sign | 0x7f800000 | (mant << 13));
    if (exp != 0) return as_float(sign | ((exp + 127 - 15) << 23) | (mant << 13));
    const float mag = float(mant) * as_float(0x33800000);  // subnormal: mant * 2^-24, exact
    return sign ? -mag : mag;
}

GGML_HD uint16_t f2h(float f) {
    const uint32_t u = as_uint(f);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000);
    const uint32_t a = u & 0x7fffffff;
    if (a > 0x7f800000) return sign | 0x7e00 | uint16_t((a >> 13) & 0x3ff);
    if (a >= 0x477ff000) return sign | 0x7c00;
    if (a >= 0x38800000) {
        const uint32_t v = a - ((127 - 15) << 23);
        return sign | uint16_t((v + 0xfff + ((v >> 13) & 1)) >> 13);
    }
    if (a <= 0x33000000) return sign;
    const uint32_t m = (a & 0x7fffff) | 0x800000;
    const int shift = 126 - int(a >> 23);
    const uint32_t q = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    return sign | uint16_t(q + (rest > half || (rest == half && (q & 1))));
}

GGML_HD float bf2f(uint16_t h) {
    return as_float(uint32_t(h) << 16);
}

GGML_HD uint16_t f2bf(float f) {
    const uint32_t u = as_uint(f);
    if ((u & 0x7fffffff) > 0x7f800000) return uint16_t((u >> 16) | 0x40);
    return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

}  // namespace ggml::cuda
