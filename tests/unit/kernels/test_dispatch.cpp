// Level selection and the dispatch tables.
#include <catch2/catch.hpp>
#include <string>

#include "kernels_test_util.h"

using namespace kernels_test;
using ggml::cpu::isa_level_capped;

TEST_CASE("GGML_CPU_FEATURES caps the detected level and never raises it", "[kernels][dispatch]") {
    CHECK(isa_level_capped(IsaLevel::Avx512, nullptr) == IsaLevel::Avx512);
    CHECK(isa_level_capped(IsaLevel::Avx512, "") == IsaLevel::Avx512);
    CHECK(isa_level_capped(IsaLevel::Avx512, "avx2") == IsaLevel::Avx2);
    CHECK(isa_level_capped(IsaLevel::Avx512, "scalar") == IsaLevel::Scalar);
    CHECK(isa_level_capped(IsaLevel::Avx512, "avx512") == IsaLevel::Avx512);
    CHECK(isa_level_capped(IsaLevel::Avx2, "avx512") == IsaLevel::Avx2);
    CHECK(isa_level_capped(IsaLevel::Scalar, "avx2") == IsaLevel::Scalar);
    CHECK(isa_level_capped(IsaLevel::Avx2, "sse9") == IsaLevel::Avx2);  // unknown: ignored
    CHECK(isa_level_capped(IsaLevel::Amx, nullptr) == IsaLevel::Amx);
    CHECK(isa_level_capped(IsaLevel::Amx, "amx") == IsaLevel::Amx);
    CHECK(isa_level_capped(IsaLevel::Amx, "avx512") == IsaLevel::Avx512);  // caps below AMX
    CHECK(isa_level_capped(IsaLevel::Amx, "avx2") == IsaLevel::Avx2);
    CHECK(isa_level_capped(IsaLevel::Avx512, "amx") == IsaLevel::Avx512);
}

TEST_CASE("a forced level is clamped to the CPU and selects that level's kernels", "[kernels][dispatch]") {
    {
        LevelScope scope(IsaLevel::Scalar);
        CHECK(ggml::cpu::isa_level() == IsaLevel::Scalar);
        CHECK(ggml::cpu::vec_dot(Type::Q4_0) == ggml::vec_dot_q4_0_q8_0_ref);
        CHECK(ggml::cpu::quantize_activations(Type::Q8_K) == ggml::quantize_row_q8_K_ref);
        CHECK(ggml::cpu::to_float(Type::Q6_K) == ggml::dequantize_row_q6_K);
    }
    {
        LevelScope scope(IsaLevel::Avx512);
        const IsaLevel want =
            int(ggml::cpu::detected_isa_level()) < int(IsaLevel::Avx512) ? ggml::cpu::detected_isa_level()
                                                                           : IsaLevel::Avx512;
        CHECK(ggml::cpu::isa_level() == want);
        if (ggml::cpu::isa_level() != IsaLevel::Scalar)
            CHECK(ggml::cpu::vec_dot(Type::Q4_0) != ggml::vec_dot_q4_0_q8_0_ref);
    }
    CHECK(std::string(ggml::cpu::isa_level_name(IsaLevel::Avx2)) == "avx2");
    CHECK(std::string(ggml::cpu::isa_level_name(IsaLevel::Amx)) == "amx");
}

TEST_CASE("every weight type has kernels at every level, other types have none", "[kernels][dispatch]") {
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (Type t : weight_types()) {
            CHECK(ggml::cpu::vec_dot(t) != nullptr);
            CHECK(ggml::cpu::gemm_tile_fn(t) != nullptr);
        }
        for (Type t : {Type::Q8_1, Type::Q8_K, Type::I32, Type::F64}) {
            CHECK(ggml::cpu::vec_dot(t) == nullptr);
            CHECK(ggml::cpu::gemm_tile_fn(t) == nullptr);
        }
        // Non-activation types keep their reference quantizer; storage-only types have none.
        CHECK(ggml::cpu::quantize_activations(Type::Q4_0) == ggml::quantize_row_q4_0_ref);
        CHECK(ggml::cpu::quantize_activations(Type::I32) == nullptr);
        CHECK(ggml::cpu::to_float(Type::I8) == nullptr);
    }
}
