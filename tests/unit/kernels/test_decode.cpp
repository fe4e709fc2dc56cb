// The decode path (gemm_tile with one column, and with the few columns of a step of several streams or a
// short draft) equals the scalar reference bit for bit at every level, for row lengths around the
// kernels' 16-block chunks, row counts around their 16-row groups, an output stride wider than the rows,
// packed rows that end exactly at the end of their buffer (nothing past a row or a column is read), and
// rows of random bytes (every quant and scale pattern).
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

void check_decode(Type t, int64_t blocks, int nr, int nc, bool random_bytes, uint32_t seed) {
    const int64_t n = blocks * ggml::block_size(t);
    const size_t bx = ggml::row_size(t, n), by = ggml::row_size(activation_type(t), n);
    const std::vector<uint8_t> made =
        random_bytes ? random_block_rows(t, n, nr, bx, seed) : quantized_rows(t, n, nr, bx, seed);
    // Exact-size copies: a read past the last row or the last column is a heap overflow under ASan.
    const std::vector<uint8_t> x(made.begin(), made.begin() + std::ptrdiff_t(bx * size_t(nr)));
    const std::vector<uint8_t> y0 = quantized_rows(activation_type(t), n, nc, by, seed + 1);
    const std::vector<uint8_t> y(y0.begin(), y0.begin() + std::ptrdiff_t(by * size_t(nc)));
    const auto ref = ggml::type_traits(t).vec_dot_ref;
    // Column c's outputs at s[1 + c * ldc ..], with two sentinels after each column's rows.
    const size_t ldc = size_t(nr) + 2;
    std::vector<float> s(ldc * size_t(nc) + 1, -1.0f);
    ggml::cpu::gemm_tile(t, n, s.data() + 1, ldc, x.data(), bx, y.data(), by, nr, nc);
    int mismatches = 0, overwritten = s[0] != -1.0f;
    for (int c = 0; c < nc; ++c) {
        const float* out = s.data() + 1 + size_t(c) * ldc;
        for (int r = 0; r < nr; ++r) {
            float want;
            ref(n, &want, x.data() + size_t(r) * bx, y.data() + size_t(c) * by);
            mismatches += bits_of(out[r]) != bits_of(want);
        }
        overwritten += (out[nr] != -1.0f) + (out[nr + 1] != -1.0f);
    }
    INFO(ggml::type_name(t) << " at " << ggml::cpu::isa_level_name(ggml::cpu::isa_level()) << ", " << blocks
                            << " blocks, " << nr << " rows, " << nc << " columns"
                            << (random_bytes ? ", random bytes" : ""));
    CHECK(mismatches == 0);
    CHECK(overwritten == 0);
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
                    for (bool random_bytes : {false, true}) check_decode(t, blocks, nr, 1, random_bytes, seed += 2);
        }
    }
}

TEST_CASE("decode of a few columns (a step of several streams or a draft) equals the reference bit for bit",
          "[kernels][decode]") {
    uint32_t seed = 5000;
    for (Type t : weight_types()) {
        if (!is_block_format(t)) continue;
        for (IsaLevel level : levels()) {
            LevelScope scope(level);
            for (int64_t blocks : {1, 16, 17, 37})
                for (int nr : {1, 16, 35})
                    for (int nc : {2, 3, 4, 7, 8, 9})
                        for (bool random_bytes : {false, true})
                            check_decode(t, blocks, nr, nc, random_bytes, seed += 2);
        }
    }
}
