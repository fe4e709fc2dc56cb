// Dot products and tiles of float rows (F32, F16, BF16 weights against same-type activations) for the
// AVX2 and AVX-512 levels. Include inside a target region (see kernels_x86_vec.h).
//
// Each output (r, c) has one vector accumulator: acc += x[i .. i+L) * y[i .. i+L) (fused), a zero-padded
// last step for the tail, then a fixed-order horizontal sum. vec_dot is the 1 x 1 tile, so every tile
// output equals vec_dot bit for bit. A loader L supplies:
//   L::Vec, L::kStep (values per step), L::kBytes (bytes per weight), L::load(row, i), L::load_tail(row, i,
//   count) (count < kStep, zero beyond), L::madd(acc, x, y) and L::hsum(acc).
#pragma once

namespace ggml::cpu {
namespace {

// With the columns in one register tile (`ahead` given: the next tile's first row, `ahead_rows` of them bx
// apart), each weight row is read once, and each row of a tile asks for the line kFloatPrefetchAhead bytes
// ahead of the one it reads, past its end in the same row of the next tile: one core's demand loads alone do
// not stream weights at the memory's rate (bench_kernels tile1, same run: f16 19.9 -> 41.3 GB/s, f32 25.5
// -> 40.0, bf16 24.4 -> 38.5; 1.5, 3 and 6 KiB tried, 3 best for f32 and bf16; with 2 to 4 columns, on
// 2026-11-29: tile2 / tile4 f16 20.3 / 17.5 -> 43.0 / 42.9, f32 27.7 / 21.6 -> 30.4 / 29.0, bf16 28.2 / 21.3
// -> 31.3 / 32.9).
constexpr int64_t kFloatPrefetchAhead = 3072;

template <class L, int R, int C>
void float_tile(int64_t n, float* s, size_t ldc, const char* x, size_t bx, const char* y, size_t by,
                const char* ahead = nullptr, int ahead_rows = 0) {
    using Acc = decltype(L::zero());
    Acc acc[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) acc[r][c] = L::zero();
    int64_t i = 0;
    const int64_t row_bytes = n * L::kBytes;
    for (; i + L::kStep <= n; i += L::kStep) {
        if (ahead) {
            const int64_t off = i * L::kBytes + kFloatPrefetchAhead;
            for (int r = 0; r < R; ++r) {
                if (off < row_bytes)
                    _mm_prefetch(x + size_t(r) * bx + size_t(off), _MM_HINT_T0);
                else if (r < ahead_rows)
                    _mm_prefetch(ahead + size_t(r) * bx + size_t(off - row_bytes), _MM_HINT_T0);
            }
        }
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
    if constexpr (R == 4 && C == 4 && requires { L::hsum_tile4x4(acc, s, ldc); }) {
        L::hsum_tile4x4(acc, s, ldc);  // the same sums, reduced together (short rows: attention scores)
    } else {
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c) s[size_t(c) * ldc + size_t(r)] = L::hsum(acc[r][c]);
    }
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
    using Fn = void (*)(int64_t, float*, size_t, const char*, size_t, const char*, size_t, const char*, int);
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
            const int next = nr - r0 - rows;  // rows after this tile
            kTiles[rows - 1][cols - 1](
                n, s + size_t(c0) * ldc + size_t(r0), ldc, x + size_t(r0) * bx, bx, y + size_t(c0) * by, by,
                nc <= kC ? x + size_t(r0 + rows) * bx : nullptr, next < kR ? next : kR);
        }
    }
}

}  // namespace
}  // namespace ggml::cpu
