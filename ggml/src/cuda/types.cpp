// Which types the CUDA kernels handle: the host-side view of dequantize.h, quantize.h and block_dot.h.
#include "ops.h"

namespace ggml::cuda {

bool can_dequantize(Type t) {
    switch (t) {
        case Type::F32:
        case Type::F16:
        case Type::BF16:
        case Type::Q4_0:
        case Type::Q4_1:
        case Type::Q5_0:
        case Type::Q5_1:
        case Type::Q8_0:
        case Type::Q8_1:
        case Type::Q2_K:
        case Type::Q3_K:
        case Type::Q4_K:
        case Type::Q5_K:
        case Type::Q6_K:
        case Type::Q8_K:
        case Type::IQ4_NL:
            return true;
        default:
            return false;
    }
}

bool can_quantize(Type t) {
    switch (t) {
        case Type::F32:
        case Type::F16:
        case Type::BF16:
        case Type::Q4_0:
        case Type::Q4_1:
        case Type::Q5_0:
        case Type::Q5_1:
        case Type::Q8_0:
        case Type::Q8_1:
        case Type::Q8_K:
        case Type::IQ4_NL:
            return true;
        default:
            return false;
    }
}

bool has_dot(Type t) {
    switch (t) {
        case Type::F32:
        case Type::F16:
        case Type::BF16:
        case Type::Q4_0:
        case Type::Q4_1:
        case Type::Q5_0:
        case Type::Q5_1:
        case Type::Q8_0:
        case Type::Q2_K:
        case Type::Q3_K:
        case Type::Q4_K:
        case Type::Q5_K:
        case Type::Q6_K:
        case Type::IQ4_NL:
            return true;
        default:
            return false;
    }
}

}  // namespace ggml::cuda
