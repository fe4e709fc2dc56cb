// gemm_tile at every level equals vec_dot for each (row, column) bit for bit, for ragged tile shapes,
// padded row strides and an output stride wider than the tile; nothing outside the tile is written.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "kernels_test_util.h"

using namespace kernels_test;

namespace {

constexpr int kMaxRows = 33, kMaxCols = 70;

uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

struct Problem {
    Type type;
    int64_t n;
    size_t bx, by;
    std::vector<uint8_t> x, y;
    std::vector<float> want;  // want[c * kMaxRows + r] from vec_dot
};

Problem make_problem(Type t, uint32_t seed) {
    // 3 blocks; float rows get a length with a tail.
    const int64_t n = ggml::block_size(t) == 1 ? 37 : 3 * ggml::block_size(t);
    Problem p{t, n, ggml::row_size(t, n) + 8, ggml::row_size(activation_type(t), n) + 12, {}, {}, {}};
    p.x = is_block_format(t) ? random_block_rows(t, n, kMaxRows, p.bx, seed)
                             : float_rows(t, n, kMaxRows, p.bx, seed);
    p.y = quantized_rows(activation_type(t), n, kMaxCols, p.by, seed + 1);
    p.want.resize(size_t(kMaxRows) * kMaxCols);
    const ggml::VecDotFn dot = ggml::cpu::vec_dot(t);
    for (int c = 0; c < kMaxCols; ++c)
        for (int r = 0; r < kMaxRows; ++r)
            dot(n, &p.want[size_t(c) * kMaxRows + size_t(r)], p.x.data() + size_t(r) * p.bx,
                p.y.data() + size_t(c) * p.by);
    return p;
}

// Runs one tile of nr x nc outputs with ldc = nr + 3 and checks every output and the gaps.
void check_tile(const Problem& p, int nr, int nc) {
    const size_t ldc = size_t(nr) + 3;
    const float sentinel = -12345.0f;
    std::vector<float> s(ldc * size_t(nc), sentinel);
    ggml::cpu::gemm_tile(p.type, p.n, s.data(), ldc, p.x.data(), p.bx, p.y.data(), p.by, nr, nc);
    int mismatches = 0, overwritten = 0;
    for (int c = 0; c < nc; ++c) {
        for (int r = 0; r < nr; ++r)
            mismatches +=
                bits_of(s[size_t(c) * ldc + size_t(r)]) != bits_of(p.want[size_t(c) * kMaxRows + size_t(r)]);
        for (size_t r = size_t(nr); r < ldc; ++r) overwritten += s[size_t(c) * ldc + r] != sentinel;
    }
    INFO(ggml::type_name(p.type) << " at " << ggml::cpu::isa_level_name(ggml::cpu::isa_level())
                                 << ", nr = " << nr << ", nc = " << nc);
    CHECK(mismatches == 0);
    CHECK(overwritten == 0);
}

}  // namespace

TEST_CASE("gemm_tile equals vec_dot per output at every level for ragged tiles", "[kernels][gemm]") {
    const int kShapes[] = {1, 2, 3, 4, 5, 7, 8, 13};
    uint32_t seed = 1;
    for (Type t : weight_types()) {
        for (IsaLevel level : levels()) {
            LevelScope scope(level);
            const Problem p = make_problem(t, seed += 2);
            for (int nr : kShapes)
                for (int nc : kShapes) check_tile(p, nr, nc);
        }
    }
}

TEST_CASE("gemm_tile handles row counts beyond one register tile and column counts beyond one pass",
          "[kernels][gemm]") {
    uint32_t seed = 500;
    for (Type t : weight_types()) {
        for (IsaLevel level : levels()) {
            LevelScope scope(level);
            const Problem p = make_problem(t, seed += 2);
            for (int nr : {16, 17, 24, 33}) check_tile(p, nr, 3);
            for (int nc : {64, 65, 70}) check_tile(p, 9, nc);
            check_tile(p, kMaxRows, kMaxCols);
        }
    }
}
