// Tensor element types and their traits: one table row per type (see ggml/src/quants/type_traits.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ggml {

// Numeric ids are those of the GGUF file format (ggml_type); never renumber.
enum class Type : int32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
    MXFP4 = 39,
};
constexpr int32_t kTypeIdLimit = 40;  // ids >= this are never valid

// Converts a row of n values (n a multiple of block_size).
using ToFloatFn = void (*)(const void* src, float* dst, int64_t n);
using FromFloatFn = void (*)(const float* src, void* dst, int64_t n);
// s = dot(x, y) over n values; x has this row type, y has the type's vec_dot_type.
using VecDotFn = void (*)(int64_t n, float* s, const void* x, const void* y);

struct TypeTraits {
    const char* name = nullptr;  // nullptr: id not supported
    int64_t block_size = 0;      // values per block
    size_t type_size = 0;        // bytes per block
    bool is_quantized = false;
    ToFloatFn to_float = nullptr;        // dequantize
    FromFloatFn from_float_ref = nullptr;  // reference (scalar) quantize, bit-exact with GGUF writers
    VecDotFn vec_dot_ref = nullptr;      // scalar reference dot product against vec_dot_type
    Type vec_dot_type = Type::F32;       // activation type paired with this weight type
};

// Traits of a type; name == nullptr for unknown ids.
const TypeTraits& type_traits(Type t);
bool type_is_known(int32_t id);
const char* type_name(Type t);
// Parses "f16", "q4_0", ... (case-insensitive); returns false if unknown.
bool type_from_name(const char* name, Type* out);
inline int64_t block_size(Type t) { return type_traits(t).block_size; }
inline size_t type_size(Type t) { return type_traits(t).type_size; }
// Bytes of a row of ne values (ne must be a multiple of the block size).
inline size_t row_size(Type t, int64_t ne) { return type_size(t) * (size_t)(ne / block_size(t)); }

// IEEE half and bfloat16 conversions (round to nearest even), used by every path.
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);

}  // namespace ggml
