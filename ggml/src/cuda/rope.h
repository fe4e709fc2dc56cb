// The angle RoPE turns a dimension pair by, and its cosine and sine, in the CPU's steps (op_rope in
// cpu/ops_rows.cpp), for host and device (hd.h): theta = pos * theta_scale^pair by repeated float
// multiplication, divided by the pair's frequency factor, times freq_scale, mixed with the unscaled angle
// by YaRN's ramp; cos and sin times the magnitude scale. Every step is a float operation of the CPU's but
// cos and sin (cos_f32/sin_f32: correctly rounded, within an ulp of glibc's cosf/sinf).
#pragma once

#include "hd.h"

namespace ggml::cuda {

// Per-op constants, computed on the host with the calls the CPU makes (so both start from the same bits).
struct RopeFreqs {
    float theta_scale;  // freq_base^(-2 / n_dims)
    float freq_scale;
    float ext_factor;    // YaRN's mix (0: none)
    float corr0, corr1;  // YaRN's correction dimensions (rope_yarn_corr_dims)
    float mscale;        // attn_factor, times 1 + 0.1 ln(1 / freq_scale) with YaRN
};

// The angle of pair `pair` at position pos; ff: the frequency divisors (F32 [n_dims / 2]) or null.
GGML_HD float rope_angle(int32_t pos, int pair, const RopeFreqs& f, const float* ff) {
    float theta = (float)pos;
    for (int i = 0; i < pair; ++i) theta *= f.theta_scale;
    const float extrap = ff ? theta / ff[pair] : theta;
    float th = f.freq_scale * extrap;
    if (f.ext_factor != 0.0f) {
        // std::max/std::min as the CPU calls them: max(a, b) = a < b ? b : a, min(a, b) = b < a ? b : a.
        const float span = f.corr1 - f.corr0;
        const float y = ((float)pair - f.corr0) / (0.001f < span ? span : 0.001f);
        const float lo = 0.0f < y ? y : 0.0f;
        const float ramp = lo < 1.0f ? lo : 1.0f;
        const float mix = (1.0f - ramp) * f.ext_factor;
        th = th * (1.0f - mix) + extrap * mix;
    }
    return th;
}

GGML_HD void rope_cos_sin(float th, float mscale, float* c, float* s) {
    *c = cos_f32(th) * mscale;
    *s = sin_f32(th) * mscale;
}

// One pair rotated by (c, s), each output one fused multiply-add (the CPU's rotate()).
GGML_HD void rope_rotate(float x0, float x1, float c, float s, float* y0, float* y1) {
    *y0 = fmaf(x0, c, -(x1 * s));
    *y1 = fmaf(x0, s, x1 * c);
}

}  // namespace ggml::cuda
