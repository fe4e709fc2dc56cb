// Element-wise ops: copies/conversions, add, mul, scale, silu, swiglu (and gpt-oss's), gelu (both forms),
// tanh.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "attn_kernels.h"
#include "ops.h"

namespace ggml::cpu {

namespace {

// Reads element i0 of a row of a non-blocked type as float.
inline float load_elem(Type t, const char* p) {
    switch (t) {
        case Type::F32: return *(const float*)p;
        case Type::F16: return fp16_to_fp32(*(const uint16_t*)p);
        case Type::BF16: return bf16_to_fp32(*(const uint16_t*)p);
        case Type::I32: return (float)*(const int32_t*)p;
        default: throw Error("dup: unsupported strided source type");
    }
}

// Loads row (i1,i2,i3) of src into out as floats, following src's strides.
void load_row_f32(const Tensor* src, int64_t i1, int64_t i2, int64_t i3, float* out) {
    const char* row = src->row_ptr(i1, i2, i3);
    const int64_t n = src->ne[0];
    if (src->type == Type::F32 && src->rows_contiguous()) {
        std::memcpy(out, row, (size_t)n * sizeof(float));
    } else if (src->rows_contiguous() && type_traits(src->type).to_float) {
        type_traits(src->type).to_float(row, out, n);
    } else {
        for (int64_t i = 0; i < n; ++i) out[i] = load_elem(src->type, row + i * src->nb[0]);
    }
}

void store_row_f32(Tensor* dst, int64_t i1, int64_t i2, int64_t i3, const float* in) {
    char* row = dst->row_ptr(i1, i2, i3);
    if (dst->type == Type::F32)
        std::memcpy(row, in, (size_t)dst->ne[0] * sizeof(float));
    else
        type_traits(dst->type).from_float_ref(in, row, dst->ne[0]);
}

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

void op_dup(const ComputeParams& p, Tensor* t) {
    const Tensor* src = t->src[0];
    // Same type, same row layout: plain byte copies.
    if (src->type == t->type && src->rows_contiguous()) {
        const size_t rs = row_size(t->type, t->ne[0]);
        // dst may have a different shape with the same element count (cont of a reshaped view is not
        // produced by our builders, so shapes match here).
        for_rows(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
            std::memcpy(t->row_ptr(i1, i2, i3), src->row_ptr(i1, i2, i3), rs);
        });
        return;
    }
    std::vector<float> tmp((size_t)t->ne[0]);
    for_rows(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
        load_row_f32(src, i1, i2, i3, tmp.data());
        store_row_f32(t, i1, i2, i3, tmp.data());
    });
}

template <typename OpF>
static void binary_op(const ComputeParams& p, Tensor* t, OpF&& f) {
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    const int64_t n0 = t->ne[0];
    for_rows(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float* ra = (const float*)a->row_ptr(i1, i2, i3);
        const float* rb = (const float*)b->row_ptr(i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]);
        float* rd = (float*)t->row_ptr(i1, i2, i3);
        const size_t sa = a->nb[0] / sizeof(float), sb = b->nb[0] / sizeof(float);
        const int64_t nb0 = b->ne[0];
        if (sa == 1 && sb == 1 && nb0 == n0) {
            for (int64_t i = 0; i < n0; ++i) rd[i] = f(ra[i], rb[i]);
        } else {
            for (int64_t i = 0; i < n0; ++i) rd[i] = f(ra[i * sa], rb[(i % nb0) * sb]);
        }
    });
}

void op_add(const ComputeParams& p, Tensor* t) {
    binary_op(p, t, [](float x, float y) { return x + y; });
}

void op_div(const ComputeParams& p, Tensor* t) {
    binary_op(p, t, [](float x, float y) { return x / y; });
}

void op_mul(const ComputeParams& p, Tensor* t) {
    binary_op(p, t, [](float x, float y) { return x * y; });
}

template <typename OpF>
static void unary_op(const ComputeParams& p, Tensor* t, OpF&& f) {
    const Tensor* a = t->src[0];
    const int64_t n0 = t->ne[0];
    const size_t sa = a->nb[0] / sizeof(float);
    for_rows(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float* ra = (const float*)a->row_ptr(i1, i2, i3);
        float* rd = (float*)t->row_ptr(i1, i2, i3);
        for (int64_t i = 0; i < n0; ++i) rd[i] = f(ra[i * sa]);
    });
}

void op_scale(const ComputeParams& p, Tensor* t) {
    const float s = t->param<float>(0);
    unary_op(p, t, [s](float x) { return x * s; });
}

static inline float silu_f(float x) { return x / (1.0f + std::exp(-x)); }

void op_silu(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    if (a->nb[0] == sizeof(float)) {
        for_rows(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
            silu_row((const float*)a->row_ptr(i1, i2, i3), (float*)t->row_ptr(i1, i2, i3), t->ne[0]);
        });
        return;
    }
    unary_op(p, t, silu_f);
}

void op_swiglu(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    if (a->nb[0] == sizeof(float) && b->nb[0] == sizeof(float) && b->ne[0] == t->ne[0]) {
        // The same rows binary_op pairs, one row kernel each (silu_row's exp equals std::exp).
        for_rows(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
            swiglu_row((const float*)a->row_ptr(i1, i2, i3),
                       (const float*)b->row_ptr(i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]),
                       (float*)t->row_ptr(i1, i2, i3), t->ne[0]);
        });
        return;
    }
    binary_op(p, t, [](float x, float y) { return silu_f(x) * y; });
}

void op_swiglu_oai(const ComputeParams& p, Tensor* t) {
    const float alpha = t->param<float>(0), limit = t->param<float>(1);
    // llama.cpp's float steps: expf of -alpha x, one division, one product.
    binary_op(p, t, [alpha, limit](float a, float b) {
        const float x = std::min(a, limit);
        const float y = std::clamp(b, -limit, limit);
        return x / (1.0f + std::exp(alpha * (-x))) * (y + 1.0f);
    });
}

float gelu_tanh_ref(float x) {
    const float kSqrt2OverPi = 0.79788456080286535587989211986876f, kCoefA = 0.044715f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoefA * x * x)));
}

namespace {
// gelu_tanh_ref of every f16 value, rounded to f16: what ggml's CPU backend looks up.
const uint16_t* gelu_table() {
    static const std::vector<uint16_t> table = [] {
        std::vector<uint16_t> t(65536);
        for (uint32_t i = 0; i < 65536; ++i) t[i] = fp32_to_fp16(gelu_tanh_ref(fp16_to_fp32((uint16_t)i)));
        return t;
    }();
    return table.data();
}
}  // namespace

void op_gelu(const ComputeParams& p, Tensor* t) {
    const uint16_t* table = gelu_table();
    unary_op(p, t, [table](float x) {
        if (x <= -10.0f) return 0.0f;
        if (x >= 10.0f) return x;
        return fp16_to_fp32(table[fp32_to_fp16(x)]);
    });
}

void op_tanh(const ComputeParams& p, Tensor* t) {
    unary_op(p, t, [](float x) { return std::tanh(x); });
}

void op_gelu_erf(const ComputeParams& p, Tensor* t) {
    // 1 + erf(z) as erfc(-z), which keeps its precision where erf(z) nears -1 (x below about -4), in double
    // and rounded once: the CUDA kernel's formula (its erfc may differ from glibc's in the last bit of a
    // double, which reaches the float only at a rounding tie's edge).
    unary_op(p, t, [](float x) {
        const double xd = x;
        return (float)(0.5 * xd * std::erfc(-xd * 0.70710678118654752440));
    });
}

}  // namespace ggml::cpu
