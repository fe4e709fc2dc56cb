// Reference dot products of the float types: exact products summed in order in double.
#include "ggml/quants.h"

namespace ggml {

void vec_dot_f32_ref(int64_t n, float* s, const void* x, const void* y) {
    const auto* a = static_cast<const float*>(x);
    const auto* b = static_cast<const float*>(y);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(a[i]) * double(b[i]);
    *s = float(sum);
}

void vec_dot_f16_ref(int64_t n, float* s, const void* x, const void* y) {
    const auto* a = static_cast<const uint16_t*>(x);
    const auto* b = static_cast<const uint16_t*>(y);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(fp16_to_fp32(a[i])) * double(fp16_to_fp32(b[i]));
    *s = float(sum);
}

void vec_dot_bf16_ref(int64_t n, float* s, const void* x, const void* y) {
    const auto* a = static_cast<const uint16_t*>(x);
    const auto* b = static_cast<const uint16_t*>(y);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(bf16_to_fp32(a[i])) * double(bf16_to_fp32(b[i]));
    *s = float(sum);
}

}  // namespace ggml
