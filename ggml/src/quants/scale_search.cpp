// Scale searches of the K-quant reference quantizers (see scale_search.h). Keep every expression's
// operand order: float rounding depends on it and the output must match ggml's bytes.
#include "scale_search.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ggml/quants.h"

namespace ggml::quant_detail {

namespace {
constexpr float kGroupMaxEps = 1e-15f;  // groups below this are treated as all zero
}

int nearest_int(float v) {
    // Saturate first (NaN goes to the low end) so the magic-number trick below stays valid.
    if (!(v > -4194303.f)) v = -4194303.f;
    if (v > 4194303.f) v = 4194303.f;
    // Adding 1.5 * 2^23 rounds to an integer held in the low mantissa bits.
    const float t = v + 12582912.f;
    int32_t i;
    std::memcpy(&i, &t, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

// Signed value of largest magnitude (first one on ties); returns its magnitude.
static float signed_absmax(int n, const float* x, float* max) {
    float amax = 0;
    *max = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            *max = x[i];
        }
    }
    return amax;
}

float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* weights) {
    float max;
    if (signed_absmax(n, x, &max) < kGroupMaxEps) {
        std::memset(L, 0, size_t(n));
        return 0.f;
    }
    auto level = [nmax](float v) { return std::clamp(nearest_int(v), -nmax, nmax - 1); };
    auto weight = [&](int i) { return weights ? weights[i] : x[i] * x[i]; };

    float iscale = -nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = level(iscale * x[i]);
        L[i] = int8_t(l + nmax);
        const float w = weight(i);
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = level(iscale * x[i]);
            const float w = weight(i);
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) L[i] = int8_t(nmax + level(iscale * x[i]));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
    float max;
    if (signed_absmax(n, x, &max) < kGroupMaxEps) {
        std::memset(L, 0, size_t(n));
        return 0.f;
    }
    const float iscale = -nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = int8_t(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    // Coordinate descent: move one value at a time to the level that is best for the scale fitted
    // to all the others, keeping the move only if the fit improves.
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (slx > 0) {
                float sl2 = suml2 - w * L[i] * L[i];
                const int new_l = std::clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (new_l != L[i]) {
                    slx += w * x[i] * new_l;
                    sl2 += w * new_l * new_l;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = int8_t(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0];
    float max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        std::memset(L, 0, size_t(n));
        *the_min = -min;
        return 0.f;
    }
    auto error_of = [use_mad](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };

    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        L[i] = uint8_t(std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
        const float diff = scale * L[i] + min - x[i];
        best_error += weights[i] * error_of(diff);
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = uint8_t(l);
            const float w = weights[i];
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                const float diff = this_scale * Laux[i] + this_min - x[i];
                cur_error += weights[i] * error_of(diff);
            }
            if (cur_error < best_error) {
                std::memcpy(L, Laux, size_t(n));
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

void quantize_k4_superblock(const float* x, int nmax, float rmin, float rdelta, int nstep, uint16_t* d,
                            uint16_t* dmin, uint8_t scales[12], uint8_t L[256]) {
    constexpr int kSub = 32;
    uint8_t Laux[kSub];
    float weights[kSub], sub_scales[8], sub_mins[8];
    float max_scale = 0, max_min = 0;  // scales and mins are >= 0 as the min is subtracted
    for (int j = 0; j < 8; ++j) {
        const float* xs = x + kSub * j;
        float sum_x2 = 0;
        for (int l = 0; l < kSub; ++l) sum_x2 += xs[l] * xs[l];
        const float av_x = std::sqrt(sum_x2 / kSub);
        for (int l = 0; l < kSub; ++l) weights[l] = av_x + std::fabs(xs[l]);
        sub_scales[j] = make_qkx2_quants(kSub, nmax, xs, weights, L + kSub * j, &sub_mins[j], Laux, rmin,
                                         rdelta, nstep, false);
        max_scale = std::max(max_scale, sub_scales[j]);
        max_min = std::max(max_min, sub_mins[j]);
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    uint8_t ls[8], lm[8];
    for (int j = 0; j < 8; ++j) {
        // ggml stores the rounded value in a uint8_t before clamping; keep that wrap-around.
        ls[j] = std::min<uint8_t>(63, uint8_t(nearest_int(inv_scale * sub_scales[j])));
        lm[j] = std::min<uint8_t>(63, uint8_t(nearest_int(inv_min * sub_mins[j])));
    }
    pack_k4_scales(ls, lm, scales);
    *d = fp32_to_fp16(max_scale / 63.f);
    *dmin = fp32_to_fp16(max_min / 63.f);
    // Re-pick the levels for the scales as stored.
    for (int j = 0; j < 8; ++j) {
        const float dl = fp16_to_fp32(*d) * float(ls[j]);
        if (!dl) continue;
        const float dm = fp16_to_fp32(*dmin) * float(lm[j]);
        for (int l = 0; l < kSub; ++l)
            L[kSub * j + l] = uint8_t(std::clamp(nearest_int((x[kSub * j + l] + dm) / dl), 0, nmax));
    }
}

}  // namespace ggml::quant_detail
