// tanh and GELU as the CPU computes them, for host and device (hd.h). The CPU's tanh is the C library's
// tanhf; glibc's (sysdeps/ieee754/flt-32/s_tanhf.c over s_expm1f.c, fdlibm's algorithms) is a sequence of
// plain float operations, which tanh_f32 repeats one by one (the library is built with --fmad=false, so
// none is fused): the same bits as std::tanh, checked on the host over every 7th float bit pattern by
// test_cuda_numerics.cpp. A C library with another tanhf (glibc 2.41 and later use CORE-MATH's correctly
// rounded one) fails that test: then the device agrees with the CPU within an ulp, no longer to the bit.
#pragma once

#include "half.h"

namespace ggml::cuda {

namespace tanh_steps {
// fdlibm's expm1f constants (bits): ln 2 split in two, 1 / ln 2, the rational approximation's coefficients.
constexpr uint32_t kLn2Hi = 0x3f317180, kLn2Lo = 0x3717f7d1, kInvLn2 = 0x3fb8aa3b;
constexpr uint32_t kQ1 = 0xbd088889, kQ2 = 0x3ad00d01, kQ3 = 0xb8a670cd, kQ4 = 0x36867e54, kQ5 = 0xb457edbb;
}  // namespace tanh_steps

// y * 2^k by adding k to y's exponent field (y normal, the result too).
GGML_HD float add_to_exponent(float y, int k) {
    return as_float(as_uint(y) + (uint32_t)k * 0x800000u);
}

// e^x - 1 with expm1f's steps, for the arguments tanh_f32 passes: -2 < x < 44 (no overflow, no NaN).
GGML_HD float expm1_f32(float x) {
    namespace s = tanh_steps;
    const uint32_t ax = as_uint(x) & 0x7fffffffu;
    const bool neg = (as_uint(x) >> 31) != 0;
    const float ln2_hi = as_float(s::kLn2Hi), ln2_lo = as_float(s::kLn2Lo);
    // Reduction: x = k ln2 + r, r in [-ln2 / 2, ln2 / 2] as r (rounded) plus a correction c.
    int k = 0;
    float c = 0.0f;
    if (ax > 0x3eb17218u) {  // |x| > ln2 / 2
        float hi, lo;
        if (ax < 0x3f851592u) {  // |x| < 3 ln2 / 2: k = +-1
            k = neg ? -1 : 1;
            hi = neg ? x + ln2_hi : x - ln2_hi;
            lo = neg ? -ln2_lo : ln2_lo;
        } else {
            k = (int)(as_float(s::kInvLn2) * x + (neg ? -0.5f : 0.5f));  // truncated, as C converts
            const float t = (float)k;
            hi = x - t * ln2_hi;
            lo = t * ln2_lo;
        }
        x = hi - lo;
        c = (hi - x) - lo;
    } else if (ax < 0x33000000u) {  // |x| < 2^-25: x itself
        return x;
    }
    const float hfx = 0.5f * x;
    const float hxs = x * hfx;
    const float r1 =
        1.0f + hxs * (as_float(s::kQ1) +
                      hxs * (as_float(s::kQ2) +
                             hxs * (as_float(s::kQ3) + hxs * (as_float(s::kQ4) + hxs * as_float(s::kQ5)))));
    const float t = 3.0f - r1 * hfx;
    float e = hxs * ((r1 - t) / (6.0f - x * t));
    if (k == 0) return x - (x * e - hxs);
    e = x * (e - c) - c;
    e -= hxs;
    if (k == -1) return 0.5f * (x - e) - 0.5f;
    if (k == 1) return x < -0.25f ? -2.0f * (e - (x + 0.5f)) : 1.0f + 2.0f * (x - e);
    if (k <= -2 || k > 56) return add_to_exponent(1.0f - (e - x), k) - 1.0f;
    if (k < 23) return add_to_exponent(as_float(0x3f800000u - (0x1000000u >> k)) - (e - x), k);  // 1 - 2^-k
    return add_to_exponent((x - (e + as_float((uint32_t)(0x7f - k) << 23))) + 1.0f, k);          // 2^-k
}

// tanh(x) with tanhf's steps: the CPU's std::tanh bit for bit (NaN payloads aside).
GGML_HD float tanh_f32(float x) {
    const uint32_t ux = as_uint(x), ax = ux & 0x7fffffffu;
    const bool neg = (ux >> 31) != 0;
    if (ax >= 0x7f800000u) return neg ? 1.0f / x - 1.0f : 1.0f / x + 1.0f;  // +-1, NaN
    if (ax == 0) return x;                                                  // +-0
    if (ax < 0x24000000u) return x * (1.0f + x);                            // |x| < 2^-55
    float z;
    if (ax >= 0x41b00000u) {  // |x| >= 22: 1 - 1e-30 rounds to 1
        z = 1.0f;
    } else if (ax >= 0x3f800000u) {  // |x| >= 1
        const float t = expm1_f32(2.0f * as_float(ax));
        z = 1.0f - 2.0f / (t + 2.0f);
    } else {
        const float t = expm1_f32(-2.0f * as_float(ax));
        z = -t / (t + 2.0f);
    }
    return neg ? -z : z;
}

// The GELU formula (tanh approximation) in f32: cpu::gelu_tanh_ref.
GGML_HD float gelu_tanh_f32(float x) {
    const float kSqrt2OverPi = 0.79788456080286535587989211986876f, kCoefA = 0.044715f;
    return 0.5f * x * (1.0f + tanh_f32(kSqrt2OverPi * x * (1.0f + kCoefA * x * x)));
}

// op_gelu: 0 at or below -10, x at or above 10, otherwise the formula at x rounded to f16, rounded to
// f16 (the CPU looks it up in a table of every f16 value; this computes the entry it would read).
GGML_HD float gelu_f32(float x) {
    if (x <= -10.0f) return 0.0f;
    if (x >= 10.0f) return x;
    return h2f(f2h(gelu_tanh_f32(h2f(f2h(x)))));
}

// An attention score as the CPU's flash_attn forms it (cpu/ops_attn.cpp): the dot product times the scale
// (already divided by the cap when soft-capping), cap * tanh of that when softcap is not 0, plus the mask.
GGML_HD float attn_score(float dot, float scale, float softcap, float mask) {
    float s = dot * scale;
    if (softcap != 0.0f) s = softcap * tanh_f32(s);
    return s + mask;
}

}  // namespace ggml::cuda
