// Row-wise ops: rms_norm, norm, get_rows, set_rows, soft_max, rope.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attn_kernels.h"
#include "kernels.h"
#include "kv_blocks.h"
#include "ops.h"

namespace ggml::cpu {

namespace {
template <typename F>
void for_rows(const ComputeParams& p, const Tensor* t, F&& f) {
    int64_t r0, r1;
    split_rows(t->nrows(), p.ith, p.nth, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t i1 = r % t->ne[1], i2 = (r / t->ne[1]) % t->ne[2], i3 = r / (t->ne[1] * t->ne[2]);
        f(i1, i2, i3);
    }
}
}  // namespace

void op_rms_norm(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const float eps = t->param<float>(0);
    const int64_t n = t->ne[0];
    const size_t sa = a->nb[0] / sizeof(float);
    for_rows(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float* x = (const float*)a->row_ptr(i1, i2, i3);
        float* y = (float*)t->row_ptr(i1, i2, i3);
        double sum = 0.0;  // sequential double sum: accurate and independent of the batch
        for (int64_t i = 0; i < n; ++i) sum += (double)(x[i * sa] * x[i * sa]);
        const float mean = (float)(sum / (double)n);
        const float sc = 1.0f / std::sqrt(mean + eps);
        for (int64_t i = 0; i < n; ++i) y[i] = x[i * sa] * sc;
    });
}

// LayerNorm's normalization: mean, then the variance of the centred values, both as sequential double
// sums (as ggml's ggml_float accumulation; independent of the batch and the thread count).
void op_norm(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const float eps = t->param<float>(0);
    const int64_t n = t->ne[0];
    const size_t sa = a->nb[0] / sizeof(float);
    for_rows(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float* x = (const float*)a->row_ptr(i1, i2, i3);
        float* y = (float*)t->row_ptr(i1, i2, i3);
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) sum += (double)x[i * sa];
        const float mean = (float)(sum / (double)n);
        double sum2 = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            const float v = x[i * sa] - mean;
            y[i] = v;
            sum2 += (double)(v * v);
        }
        const float sc = 1.0f / std::sqrt((float)(sum2 / (double)n) + eps);
        for (int64_t i = 0; i < n; ++i) y[i] *= sc;
    });
}

void op_get_rows(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* ids = t->src[1];
    const int64_t n = a->ne[0];
    const auto to_float = type_traits(a->type).to_float;
    for_rows(p, t, [&](int64_t i1, int64_t i2, int64_t) {
        const int32_t row = *(const int32_t*)((const char*)ids->data + i1 * ids->nb[0] + i2 * ids->nb[1]);
        if (row < 0 || row >= a->ne[1]) fatal("get_rows: row id out of range");
        const char* src = a->row_ptr(row, i2 % a->ne[2]);
        float* dst = (float*)t->row_ptr(i1, i2);
        if (a->type == Type::F32)
            std::memcpy(dst, src, (size_t)n * sizeof(float));
        else
            to_float(src, dst, n);
    });
}

void op_set_rows(const ComputeParams& p, Tensor* t) {
    Tensor* dst = t;  // aliases the destination (the view created by set_rows)
    const Tensor* src = t->src[1];
    const Tensor* ids = t->src[2];
    const int64_t n = src->ne[0];
    const auto from_float = type_traits(dst->type).from_float_ref;
    int64_t r0, r1;
    split_rows(src->ne[1], p.ith, p.nth, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t id =
            ids->type == Type::I32 ? (int64_t)((const int32_t*)ids->data)[r] : ((const int64_t*)ids->data)[r];
        if (id < 0 || id >= dst->ne[1]) fatal("set_rows: row id out of range");
        const float* s = (const float*)src->row_ptr(r);
        char* d = dst->row_ptr(id);
        if (dst->type == Type::F32)
            std::memcpy(d, s, (size_t)n * sizeof(float));
        else
            from_float(s, d, n);
    }
}

void op_soft_max(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* mask = t->src[1];
    const Tensor* blocks = kv_blocks(t);  // with it, only the row's visible blocks are read and written
    const float* sinks = t->src[2] ? (const float*)t->src[2]->data : nullptr;
    const float scale = t->param<float>(0);
    const int64_t n = t->ne[0];
    std::vector<float> m(mask ? (size_t)n : 0);
    const auto f16_to_float = cpu::to_float(Type::F16);
    // Scaled, masked scores and their exponentials for row (i1, i2, i3); returns the row's maximum.
    auto scores = [&](int64_t i1, int64_t i2, int64_t i3, const RowBlocks* vis) {
        const float* x = (const float*)a->row_ptr(i1, i2, i3);
        float* y = (float*)t->row_ptr(i1, i2, i3);
        const int64_t spans = kv_spans(vis);
        const float* mrow = nullptr;
        if (mask) {
            const char* mr = mask->row_ptr(i1, i2 % mask->ne[2], i3 % mask->ne[3]);
            if (mask->type == Type::F32) {
                mrow = (const float*)mr;
            } else {
                for (int64_t s = 0; s < spans; ++s) {
                    int64_t j0, j1;
                    kv_span(vis, s, n, &j0, &j1);
                    f16_to_float((const uint16_t*)mr + j0, m.data() + j0, j1 - j0);
                }
                mrow = m.data();
            }
        }
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t s = 0; s < spans; ++s) {
            int64_t j0, j1;
            kv_span(vis, s, n, &j0, &j1);
            const float smx = scale_mask_max_row(x + j0, scale, mrow ? mrow + j0 : nullptr, y + j0, j1 - j0);
            mx = smx > mx ? smx : mx;
        }
        // The head's sink takes part in the maximum and the sum (added after the row, as llama.cpp does).
        if (sinks) mx = sinks[i2] > mx ? sinks[i2] : mx;
        return mx;
    };
    auto normalize = [&](int64_t i1, int64_t i2, int64_t i3, const RowBlocks* vis, float mx, double sum) {
        float* y = (float*)t->row_ptr(i1, i2, i3);
        if (sinks) sum += (double)std::exp(sinks[i2] - mx);
        const float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f;
        for (int64_t s = 0; s < kv_spans(vis); ++s) {
            int64_t j0, j1;
            kv_span(vis, s, n, &j0, &j1);
            for (int64_t j = j0; j < j1; ++j) y[j] *= inv;
        }
    };
    auto same_blocks = [&](int64_t j, int64_t k) {
        if (!blocks) return true;
        const RowBlocks x = kv_blocks_row(blocks, j), y = kv_blocks_row(blocks, k);
        return x.count == y.count && std::equal(x.index, x.index + x.count, y.index);
    };
    // Rows in groups of up to 8 adjacent queries of one head that see the same blocks (a prompt's queries):
    // their sums run side by side (sum_rows_f64). Sequential sums, masked entries exactly zero, so the result
    // does not depend on how many cells of other sequences sit between ours (nor on whether their blocks are
    // skipped), nor on the grouping.
    const size_t stride = t->nb[1] / sizeof(float);
    const bool groupable = t->nb[0] == sizeof(float) && t->nb[1] % sizeof(float) == 0;
    int64_t r0, r1;
    split_rows(t->nrows(), p.ith, p.nth, &r0, &r1);
    for (int64_t r = r0; r < r1;) {
        const int64_t i1 = r % t->ne[1], i2 = (r / t->ne[1]) % t->ne[2], i3 = r / (t->ne[1] * t->ne[2]);
        int g = 1;
        while (groupable && g < 8 && r + g < r1 && i1 + g < t->ne[1] && same_blocks(i1, i1 + g)) ++g;
        const RowBlocks rb = blocks ? kv_blocks_row(blocks, i1) : RowBlocks{};
        const RowBlocks* vis = blocks ? &rb : nullptr;
        float mx[8];
        double sum[8] = {};
        for (int k = 0; k < g; ++k) {
            mx[k] = scores(i1 + k, i2, i3, vis);
            float* y = (float*)t->row_ptr(i1 + k, i2, i3);
            for (int64_t s = 0; s < kv_spans(vis); ++s) {
                int64_t j0, j1;
                kv_span(vis, s, n, &j0, &j1);
                if (g == 1)
                    sum[0] =
                        exp_row(y + j0, mx[0], y + j0, j1 - j0, sum[0]);  // the same function flash_attn uses
                else
                    exp_row_values(y + j0, mx[k], y + j0, j1 - j0);
            }
        }
        if (g > 1) {
            const float* y0 = (const float*)t->row_ptr(i1, i2, i3);
            for (int64_t s = 0; s < kv_spans(vis); ++s) {
                int64_t j0, j1;
                kv_span(vis, s, n, &j0, &j1);
                sum_rows_f64(y0 + j0, stride, g, j1 - j0, sum);
            }
        }
        for (int k = 0; k < g; ++k) normalize(i1 + k, i2, i3, vis, mx[k], sum[k]);
        r += g;
    }
}

namespace {
// One pair rotated by (c, s), each output with one fused multiply-add: the rounding of llama.cpp's CPU
// rope (GCC contracts its x0*c - x1*s and x0*s + x1*c this way), so Q and K match it bit for bit.
inline void rotate(float x0, float x1, float c, float s, float* y0, float* y1) {
    *y0 = std::fma(x0, c, -(x1 * s));
    *y1 = std::fma(x0, s, x1 * c);
}
}  // namespace

void op_rope(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* pos = t->src[1];
    const float* ff = t->src[2] ? (const float*)t->src[2]->data : nullptr;  // frequency divisors
    const int n_dims = t->param<int32_t>(0);
    const int mode = t->param<int32_t>(1);
    const float freq_base = t->param<float>(2);
    const float freq_scale = t->param<float>(3);
    const float ext_factor = t->param<float>(4);
    const float attn_factor = t->param<float>(5);
    float corr[2] = {0.0f, 0.0f};
    if (ext_factor != 0.0f)
        rope_yarn_corr_dims(n_dims, t->param<int32_t>(8), freq_base, t->param<float>(6), t->param<float>(7),
                            corr);
    // cos and sin scaled by the attention factor (times YaRN's magnitude correction when it mixes).
    const float mscale =
        ext_factor != 0.0f ? attn_factor * (1.0f + 0.1f * std::log(1.0f / freq_scale)) : attn_factor;
    const float theta_scale = std::pow(freq_base, -2.0f / (float)n_dims);
    const int64_t ne0 = t->ne[0];
    const size_t sa = a->nb[0] / sizeof(float);
    std::vector<float> cs((size_t)n_dims);
    int64_t cached_pos = std::numeric_limits<int64_t>::min();
    // rows are (head i1, token i2, i3)
    for_rows(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
        const int32_t ps = ((const int32_t*)pos->data)[i2];
        if (ps != cached_pos) {
            float theta = (float)ps;
            for (int i = 0; i < n_dims; i += 2) {
                const float extrap = ff ? theta / ff[i / 2] : theta;  // the unscaled angle
                float th = freq_scale * extrap;                       // interpolated
                if (ext_factor != 0.0f) {
                    // YaRN: pairs below corr[0] keep extrap, above corr[1] interpolate, a linear ramp
                    // between.
                    const float y = (float)(i / 2 - corr[0]) / std::max(0.001f, corr[1] - corr[0]);
                    const float mix = (1.0f - std::min(1.0f, std::max(0.0f, y))) * ext_factor;
                    th = th * (1.0f - mix) + extrap * mix;
                }
                cs[i] = std::cos(th) * mscale;
                cs[i + 1] = std::sin(th) * mscale;
                theta *= theta_scale;
            }
            cached_pos = ps;
        }
        const float* x = (const float*)a->row_ptr(i1, i2, i3);
        float* y = (float*)t->row_ptr(i1, i2, i3);
        if (mode == kRopeNeox) {
            const int half = n_dims / 2;
            for (int i = 0; i < half; ++i) {
                const float c = cs[2 * i], s = cs[2 * i + 1];
                const float x0 = x[i * sa], x1 = x[(i + half) * sa];
                rotate(x0, x1, c, s, &y[i], &y[i + half]);
            }
        } else {
            for (int i = 0; i < n_dims; i += 2) {
                const float c = cs[i], s = cs[i + 1];
                const float x0 = x[i * sa], x1 = x[(i + 1) * sa];
                rotate(x0, x1, c, s, &y[i], &y[i + 1]);
            }
        }
        for (int64_t i = n_dims; i < ne0; ++i) y[i] = x[i * sa];
    });
}

}  // namespace ggml::cpu
