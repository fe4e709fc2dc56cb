// Compiles a region of a file for one instruction set, so the rest of the binary still runs on any
// x86-64 CPU; kernels_dispatch.cpp calls into a region only when CPUID reports its features.
//
// Include the standard headers and <immintrin.h> before GGML_TARGET_*_BEGIN: code inside a region
// (including inline functions of headers first included there) is compiled for that target, and headers
// included inside must give everything internal linkage so that no out-of-line copy can be shared with
// code compiled for a different target.
#pragma once

#if defined(__x86_64__)

#define GGML_ISA_AVX2 "avx2,fma,f16c,bmi,bmi2,popcnt"
#define GGML_ISA_AVX512 GGML_ISA_AVX2 ",avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"
#define GGML_ISA_AVX512BF16 GGML_ISA_AVX512 ",avx512bf16"
#define GGML_ISA_AMX GGML_ISA_AVX512 ",amx-tile,amx-int8,amx-bf16"

#if defined(__clang__)
#define GGML_TARGET_BEGIN_(isa) \
    _Pragma(GGML_STR_(clang attribute push(__attribute__((target(isa))), apply_to = function)))
#define GGML_TARGET_END _Pragma("clang attribute pop")
#define GGML_STR_(x) #x
#else
#define GGML_TARGET_BEGIN_(isa) _Pragma("GCC push_options") GGML_TARGET_PRAGMA_(GCC target(isa))
#define GGML_TARGET_PRAGMA_(x) _Pragma(#x)
#define GGML_TARGET_END _Pragma("GCC pop_options")
#endif

#define GGML_TARGET_AVX2_BEGIN GGML_TARGET_BEGIN_(GGML_ISA_AVX2)
#define GGML_TARGET_AVX512_BEGIN GGML_TARGET_BEGIN_(GGML_ISA_AVX512)
#define GGML_TARGET_AVX512BF16_BEGIN GGML_TARGET_BEGIN_(GGML_ISA_AVX512BF16)
#define GGML_TARGET_AMX_BEGIN GGML_TARGET_BEGIN_(GGML_ISA_AMX)

#endif
