// Dot products and tiles of float rows (F32, F16, BF16 weights against same-type activations) for the
// AVX2 and AVX-512 levels. Include inside a target region (see kernels_x86_vec.h).
//
// Each output (r, c) has one vector accumulator: acc += x[i .. i+L) * y[i .. i+L) (fused), a zero-padded
// last step for the tail, then a fixed-order horizontal sum. vec_dot is the 1 x 1 tile, so every tile
// output equals vec_dot bit for bit. A loader L supplies:
//   L::Vec, L::kStep (values per step), L::load(row, i), L::load_tail(row, i, count) (count < kStep,
//   zero beyond), L::madd(acc, x, y) and L::hsum(acc).
#pragma once

namespace ggml::cpu {
namespace {

template <class L, int R, int C>
void float_tile(int64_t n, float* s, size_t ldc, const char* x, size_t bx, const char* y, size_t by) {
    using Acc = decltype(L::zero());
    Acc acc[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) acc[r][c] = L::zero();
    int64_t i = 0;
    for (; i + L::kStep <= n; i += L::kStep) {
        typename L::Vec xv[R], yv[C];
        for (int r = 0; r < R; ++r) xv[r] = L::load(x + size_t(r) * bx, i);
        for (int c = 0; c < C; ++c) yv[c] = L::load(y + size_t(c) * by, i);
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) acc[r][c] = L::madd(acc[r][c], xv[r], yv[c]);
    }
    if (i < n) {
        const int count = int(n - i);
        typename L::Vec xv[R], yv[C];
        for (int r = 0; r < R; ++r) xv[r] = L::load_tail(x + size_t(r) * bx, i, count);
        for (int c = 0; c < C; ++c) yv[c] = L::load_tail(y + size_t(c) * by, i, count);
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) acc[r][c] = L::madd(acc[r][c], xv[r], yv[c]);
    }
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) s[size_t(c) * ldc + size_t(r)] = L::hsum(acc[r][c]);
}

template <class L>
void float_vec_dot(int64_t n, float* s, const void* x, const void* y) {
    float_tile<L, 1, 1>(n, s, 0, static_cast<const char*>(x), 0, static_cast<const char*>(y), 0);
}

// Up to 4 x 4 outputs per register tile: rows in the outer loop keep the weight rows cached while the
// columns stream past.
template <class L, int kR, int kC>
void float_gemm(int64_t n, float* s, size_t ldc, const void* vx, size_t bx, const void* vy, size_t by, int nr,
                int nc) {
    static_assert(kR <= 4 && kC <= 4);
    using Fn = void (*)(int64_t, float*, size_t, const char*, size_t, const char*, size_t);
    static constexpr Fn kTiles[4][4] = {
        {float_tile<L, 1, 1>, float_tile<L, 1, 2>, float_tile<L, 1, 3>, float_tile<L, 1, 4>},
        {float_tile<L, 2, 1>, float_tile<L, 2, 2>, float_tile<L, 2, 3>, float_tile<L, 2, 4>},
        {float_tile<L, 3, 1>, float_tile<L, 3, 2>, float_tile<L, 3, 3>, float_tile<L, 3, 4>},
        {float_tile<L, 4, 1>, float_tile<L, 4, 2>, float_tile<L, 4, 3>, float_tile<L, 4, 4>},
    };
    const char* x = static_cast<const char*>(vx);
    const char* y = static_cast<const char*>(vy);
    for (int r0 = 0; r0 < nr; r0 += kR) {
        const int rows = nr - r0 < kR ? nr - r0 : kR;
        for (int c0 = 0; c0 < nc; c0 += kC) {
            const int cols = nc - c0 < kC ? nc - c0 : kC;
            kTiles[rows - 1][cols - 1](n, s + size_t(c0) * ldc + size_t(r0), ldc, x + size_t(r0) * bx, bx,
                                       y + size_t(c0) * by, by);
        }
    }
}

}  // namespace
}  // namespace ggml::cpu
