// The AMX tile kernels against the scalar reference, bit for bit, at prefill-like shapes: rows and columns
// that are not multiples of the 16 x 16 tile, K of an odd number of blocks, several column groups.
// Skipped (exit code 77, with the reason) where the CPU or the OS gives no AMX.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels_test_util.h"

using namespace kernels_test;

namespace {

void require_amx() {
    if (ggml::cpu::detected_isa_level() == IsaLevel::Amx) return;
    std::printf("SKIPPED: no AMX here (CPUID AMX-TILE + AMX-INT8 and the OS's tile permission): level %s\n",
                ggml::cpu::isa_level_name(ggml::cpu::detected_isa_level()));
    std::fflush(stdout);
    std::exit(77);
}

const Type kAmxTypes[] = {Type::Q4_0, Type::Q4_1,   Type::Q5_0, Type::Q5_1,
                          Type::Q8_0, Type::IQ4_NL, Type::Q4_K, Type::Q5_K};

// nr x nc outputs of K = nb blocks from fresh random rows, compared with the reference vec_dot.
void check_against_reference(Type t, int64_t nb, int nr, int nc, uint32_t seed) {
    const int64_t n = ggml::block_size(t) * nb;
    const Type at = activation_type(t);
    const size_t bx = ggml::row_size(t, n) + 6, by = ggml::row_size(at, n) + 10;
    const std::vector<uint8_t> x = random_block_rows(t, n, nr, bx, seed);
    const std::vector<uint8_t> y = quantized_rows(at, n, nc, by, seed + 1);
    const size_t ldc = size_t(nr) + 5;
    std::vector<float> s(ldc * size_t(nc), -1.0f);
    ggml::cpu::gemm_tile(t, n, s.data(), ldc, x.data(), bx, y.data(), by, nr, nc);
    const ggml::VecDotFn ref = ggml::type_traits(t).vec_dot_ref;
    int mismatches = 0, overwritten = 0;
    for (int c = 0; c < nc; ++c) {
        for (int r = 0; r < nr; ++r) {
            float want;
            ref(n, &want, x.data() + size_t(r) * bx, y.data() + size_t(c) * by);
            mismatches += std::memcmp(&want, &s[size_t(c) * ldc + size_t(r)], sizeof want) != 0;
        }
        for (size_t r = size_t(nr); r < ldc; ++r) overwritten += s[size_t(c) * ldc + r] != -1.0f;
    }
    INFO(ggml::type_name(t) << ": K = " << n << ", nr = " << nr << ", nc = " << nc);
    CHECK(mismatches == 0);
    CHECK(overwritten == 0);
}

}  // namespace

TEST_CASE("AMX tiles equal the scalar reference bit for bit at ragged prefill shapes",
          "[kernels][gemm][amx]") {
    require_amx();
    LevelScope scope(IsaLevel::Amx);
    REQUIRE(ggml::cpu::isa_level() == IsaLevel::Amx);
    uint32_t seed = 900;
    for (Type t : kAmxTypes) {
        // The AMX level has its own tile kernel for these types.
        ggml::cpu::GemmTileFn amx_tile = ggml::cpu::gemm_tile_fn(t);
        {
            LevelScope avx512(IsaLevel::Avx512);
            CHECK(ggml::cpu::gemm_tile_fn(t) != amx_tile);
        }
        for (int64_t nb : {1, 2, 3, 7, 69})
            for (int nr : {1, 15, 16, 33, 64})
                for (int nc : {4, 5, 16, 17, 31, 64}) check_against_reference(t, nb, nr, nc, seed += 2);
    }
}

TEST_CASE("GGML_CPU_FEATURES=avx512 turns the AMX tiles off", "[kernels][dispatch][amx]") {
    require_amx();
    CHECK(ggml::cpu::isa_level_capped(ggml::cpu::detected_isa_level(), "avx512") == IsaLevel::Avx512);
    LevelScope scope(IsaLevel::Avx512);
    CHECK(ggml::cpu::isa_level() == IsaLevel::Avx512);
}
