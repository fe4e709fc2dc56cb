// The type table: one row per GGUF type id. Adding a type means adding a row here.
#include <array>
#include <cctype>
#include <cstring>

#include "ggml/quants.h"
#include "ggml/types.h"

namespace ggml {

namespace {

struct Row {
    Type type;
    TypeTraits traits;
};

// name, block_size, type_size, is_quantized, to_float, from_float_ref, vec_dot_ref, vec_dot_type
constexpr Row kRows[] = {
    {Type::F32, {"f32", 1, 4, false, f32_copy_row, f32_from_float_row, vec_dot_f32_ref, Type::F32}},
    {Type::F16, {"f16", 1, 2, false, fp16_to_fp32_row, fp32_to_fp16_row, vec_dot_f16_ref, Type::F16}},
    {Type::BF16, {"bf16", 1, 2, false, bf16_to_fp32_row, fp32_to_bf16_row, vec_dot_bf16_ref, Type::BF16}},
    {Type::Q4_0,
     {"q4_0", QK4_0, sizeof(BlockQ4_0), true, dequantize_row_q4_0, quantize_row_q4_0_ref,
      vec_dot_q4_0_q8_0_ref, Type::Q8_0}},
    {Type::Q4_1,
     {"q4_1", QK4_1, sizeof(BlockQ4_1), true, dequantize_row_q4_1, quantize_row_q4_1_ref,
      vec_dot_q4_1_q8_1_ref, Type::Q8_1}},
    {Type::Q5_0,
     {"q5_0", QK5_0, sizeof(BlockQ5_0), true, dequantize_row_q5_0, quantize_row_q5_0_ref,
      vec_dot_q5_0_q8_0_ref, Type::Q8_0}},
    {Type::Q5_1,
     {"q5_1", QK5_1, sizeof(BlockQ5_1), true, dequantize_row_q5_1, quantize_row_q5_1_ref,
      vec_dot_q5_1_q8_1_ref, Type::Q8_1}},
    {Type::Q8_0,
     {"q8_0", QK8_0, sizeof(BlockQ8_0), true, dequantize_row_q8_0, quantize_row_q8_0_ref,
      vec_dot_q8_0_q8_0_ref, Type::Q8_0}},
    // Activation-only formats: no dot product of their own.
    {Type::Q8_1,
     {"q8_1", QK8_1, sizeof(BlockQ8_1), true, dequantize_row_q8_1, quantize_row_q8_1_ref, nullptr,
      Type::Q8_1}},
    {Type::Q2_K,
     {"q2_K", QK_K, sizeof(BlockQ2_K), true, dequantize_row_q2_K, quantize_row_q2_K_ref,
      vec_dot_q2_K_q8_K_ref, Type::Q8_K}},
    {Type::Q3_K,
     {"q3_K", QK_K, sizeof(BlockQ3_K), true, dequantize_row_q3_K, quantize_row_q3_K_ref,
      vec_dot_q3_K_q8_K_ref, Type::Q8_K}},
    {Type::Q4_K,
     {"q4_K", QK_K, sizeof(BlockQ4_K), true, dequantize_row_q4_K, quantize_row_q4_K_ref,
      vec_dot_q4_K_q8_K_ref, Type::Q8_K}},
    {Type::Q5_K,
     {"q5_K", QK_K, sizeof(BlockQ5_K), true, dequantize_row_q5_K, quantize_row_q5_K_ref,
      vec_dot_q5_K_q8_K_ref, Type::Q8_K}},
    {Type::Q6_K,
     {"q6_K", QK_K, sizeof(BlockQ6_K), true, dequantize_row_q6_K, quantize_row_q6_K_ref,
      vec_dot_q6_K_q8_K_ref, Type::Q8_K}},
    {Type::Q8_K,
     {"q8_K", QK_K, sizeof(BlockQ8_K), true, dequantize_row_q8_K, quantize_row_q8_K_ref, nullptr,
      Type::Q8_K}},
    {Type::IQ4_NL,
     {"iq4_nl", QK4_NL, sizeof(BlockIQ4_NL), true, dequantize_row_iq4_nl, quantize_row_iq4_nl_ref,
      vec_dot_iq4_nl_q8_0_ref, Type::Q8_0}},
    {Type::IQ4_XS,
     {"iq4_xs", QK_K, sizeof(BlockIQ4_XS), true, dequantize_row_iq4_xs, quantize_row_iq4_xs_ref,
      vec_dot_iq4_xs_q8_K_ref, Type::Q8_K}},
    {Type::IQ3_XXS,
     {"iq3_xxs", QK_K, sizeof(BlockIQ3_XXS), true, dequantize_row_iq3_xxs, quantize_row_iq3_xxs_ref,
      vec_dot_iq3_xxs_q8_K_ref, Type::Q8_K}},
    {Type::IQ3_S,
     {"iq3_s", QK_K, sizeof(BlockIQ3_S), true, dequantize_row_iq3_s, quantize_row_iq3_s_ref,
      vec_dot_iq3_s_q8_K_ref, Type::Q8_K}},
    // No quantizer without an importance matrix (as in llama.cpp): IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M.
    {Type::IQ2_XXS,
     {"iq2_xxs", QK_K, sizeof(BlockIQ2_XXS), true, dequantize_row_iq2_xxs, nullptr, vec_dot_iq2_xxs_q8_K_ref,
      Type::Q8_K}},
    {Type::IQ2_XS,
     {"iq2_xs", QK_K, sizeof(BlockIQ2_XS), true, dequantize_row_iq2_xs, nullptr, vec_dot_iq2_xs_q8_K_ref,
      Type::Q8_K}},
    {Type::IQ2_S,
     {"iq2_s", QK_K, sizeof(BlockIQ2_S), true, dequantize_row_iq2_s, nullptr, vec_dot_iq2_s_q8_K_ref,
      Type::Q8_K}},
    {Type::IQ1_S,
     {"iq1_s", QK_K, sizeof(BlockIQ1_S), true, dequantize_row_iq1_s, nullptr, vec_dot_iq1_s_q8_K_ref,
      Type::Q8_K}},
    {Type::IQ1_M,
     {"iq1_m", QK_K, sizeof(BlockIQ1_M), true, dequantize_row_iq1_m, nullptr, vec_dot_iq1_m_q8_K_ref,
      Type::Q8_K}},
    {Type::TQ1_0,
     {"tq1_0", QK_K, sizeof(BlockTQ1_0), true, dequantize_row_tq1_0, quantize_row_tq1_0_ref,
      vec_dot_tq1_0_q8_K_ref, Type::Q8_K}},
    {Type::TQ2_0,
     {"tq2_0", QK_K, sizeof(BlockTQ2_0), true, dequantize_row_tq2_0, quantize_row_tq2_0_ref,
      vec_dot_tq2_0_q8_K_ref, Type::Q8_K}},
    {Type::MXFP4,
     {"mxfp4", QK_MXFP4, sizeof(BlockMXFP4), true, dequantize_row_mxfp4, quantize_row_mxfp4_ref,
      vec_dot_mxfp4_q8_0_ref, Type::Q8_0}},
    // Integer and double tensors: storage only.
    {Type::I8, {"i8", 1, 1, false, nullptr, nullptr, nullptr, Type::I8}},
    {Type::I16, {"i16", 1, 2, false, nullptr, nullptr, nullptr, Type::I16}},
    {Type::I32, {"i32", 1, 4, false, nullptr, nullptr, nullptr, Type::I32}},
    {Type::I64, {"i64", 1, 8, false, nullptr, nullptr, nullptr, Type::I64}},
    {Type::F64, {"f64", 1, 8, false, nullptr, nullptr, nullptr, Type::F64}},
};

// The rows indexed by type id; ids without a row keep name == nullptr.
const std::array<TypeTraits, kTypeIdLimit>& table() {
    static const auto t = [] {
        std::array<TypeTraits, kTypeIdLimit> a{};
        for (const Row& r : kRows) a[size_t(r.type)] = r.traits;
        return a;
    }();
    return t;
}

bool equal_ignoring_case(const char* a, const char* b) {
    for (; *a && *b; ++a, ++b)
        if (std::tolower((unsigned char)*a) != std::tolower((unsigned char)*b)) return false;
    return *a == *b;
}

}  // namespace

const TypeTraits& type_traits(Type t) {
    static const TypeTraits unknown{};
    const auto id = int32_t(t);
    return id >= 0 && id < kTypeIdLimit ? table()[size_t(id)] : unknown;
}

bool type_is_known(int32_t id) {
    return id >= 0 && id < kTypeIdLimit && table()[size_t(id)].name != nullptr;
}

const char* type_name(Type t) {
    const char* name = type_traits(t).name;
    return name ? name : "unknown";
}

bool type_from_name(const char* name, Type* out) {
    if (!name) return false;
    for (const Row& r : kRows) {
        if (equal_ignoring_case(name, r.traits.name)) {
            if (out) *out = r.type;
            return true;
        }
    }
    return false;
}

}  // namespace ggml
