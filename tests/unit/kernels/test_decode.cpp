// The decode path (gemm_tile with one column) equals the scalar reference bit for bit at every level,
// for row lengths around the kernels' 16-block chunks, row counts around their 16-row groups, packed
// rows that end exactly at the end of their buffer (nothing past a row is read), and rows of random
// bytes (every quant and scale pattern).
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "kernels_test_util.h"

using namespace kernels_test;

namespace {

uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

void check_decode(Type t, int64_t blocks, int nr, bool random_bytes, uint32_t seed) {
    const int64_t n = blocks * ggml::block_size(t);
    const size_t bx = ggml::row_size(t, n), by = ggml::row_size(activation_type(t), n);
    const std::vector<uint8_t> made =
        random_bytes ? random_block_rows(t, n, nr, bx, seed) : quantized_rows(t, n, nr, bx, seed);
    // Exact-size copies: a read past the last row or the activation is a heap overflow under ASan.
    const std::vector<uint8_t> x(made.begin(), made.begin() + std::ptrdiff_t(bx * size_t(nr)));
    const std::vector<uint8_t> y0 = quantized_rows(activation_type(t), n, 1, by, seed + 1);
    const std::vector<uint8_t> y(y0.begin(), y0.begin() + std::ptrdiff_t(by));
    const auto ref = ggml::type_traits(t).vec_dot_ref;
    std::vector<float> s(size_t(nr) + 2, -1.0f);
    ggml::cpu::gemm_tile(t, n, s.data() + 1, size_t(nr), x.data(), bx, y.data(), by, nr, 1);
    int mismatches = 0;
    for (int r = 0; r < nr; ++r) {
        float want;
        ref(n, &want, x.data() + size_t(r) * bx, y.data());
        mismatches += bits_of(s[size_t(r) + 1]) != bits_of(want);
    }
    INFO(ggml::type_name(t) << " at " << ggml::cpu::isa_level_name(ggml::cpu::isa_level()) << ", " << blocks
                            << " blocks, " << nr << " rows" << (random_bytes ? ", random bytes" : ""));
    CHECK(mismatches == 0);
    CHECK(s[0] == -1.0f);
    CHECK(s[size_t(nr) + 1] == -1.0f);
}

}  // namespace

TEST_CASE("decode (one column) equals the reference bit for bit at every level", "[kernels][decode]") {
    uint32_t seed = 900;
    for (Type t : weight_types()) {
        if (!is_block_format(t)) continue;
        for (IsaLevel level : levels()) {
            LevelScope scope(level);
            for (int64_t blocks : {1, 2, 15, 16, 17, 37, 64})
                for (int nr : {1, 3, 16, 17, 35})
                    for (bool random_bytes : {false, true}) check_decode(t, blocks, nr, random_bytes, seed += 2);
        }
    }
}
