// Shared parts of the AMX tile kernels (gemm_amx.cpp, gemm_amx_kquants.cpp). Include inside an AMX target
// region (see kernels_simd_target.h), after <algorithm>, <cstring> and kernels_levels.h.
//
// One step multiplies A, 16 activation columns of 32 signed bytes (rows a_stride bytes apart, straight
// from the activation rows), by the B tiles of two groups of 16 weight rows (8 rows of 64 bytes: B row j,
// dword r = the signed values 4j .. 4j+3 of weight row r), giving C[c][r] = the exact int32 sum over the 32
// values for (row r, column c) of each group.
#pragma once

namespace ggml::cpu {
namespace {

constexpr int kRows = 16;  // weight rows per B tile: the lanes of C
constexpr int kCols = 16;  // activation columns per A tile: the rows of C
constexpr int kQuants = 32;

// Fewer columns than this run the AVX-512 tile (same bits): the tile unit would idle over its padding.
constexpr int kMinColumns = 4;

// Tile registers, one configuration for every AMX kernel: C (int32 sums, 16 x 16) of two row groups in
// tmm0/tmm1, A (activations, 16 x 32 bytes) in tmm2, B (weights, 8 x 64 bytes) of the two row groups in
// tmm4/tmm5; tmm3 (A-shaped), tmm6 and tmm7 are unused.
struct alignas(64) TileConfig {
    uint8_t palette;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

TileConfig make_config() {
    TileConfig c{};
    c.palette = 1;
    for (int t : {0, 1}) c.rows[t] = kCols, c.colsb[t] = kRows * 4;
    for (int t : {2, 3}) c.rows[t] = kCols, c.colsb[t] = kQuants;
    for (int t : {4, 5}) c.rows[t] = kQuants / 4, c.colsb[t] = kRows * 4;
    return c;
}

// Once per thread and file: the OS permission, then this thread's tile configuration (every AMX kernel
// loads the same one).
bool thread_ready() {
    thread_local const bool ready = [] {
        if (!amx::request_permission()) return false;
        static const TileConfig config = make_config();
        asm volatile("" ::: "memory");
        _tile_loadconfig(&config);
        return true;
    }();
    return ready;
}

// Block sums of 16 columns (A rows a_stride bytes apart) by two groups of 16 packed rows: issue() starts
// the products (one A load for both), store() writes group k's C to sums[k][c * 16 + r]. Storing right
// after the products would wait for them; the kernel scales the previous block in between.
inline void issue(const char* a, size_t a_stride, const int8_t* b0, const int8_t* b1) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_loadd(2, a, a_stride);
    _tile_loadd(4, b0, 64);
    _tile_dpbssd(0, 2, 4);
    _tile_loadd(5, b1, 64);
    _tile_dpbssd(1, 2, 5);
}
inline void store(int32_t (*sums)[kCols * kRows]) {
    _tile_stored(0, sums[0], 64);
    _tile_stored(1, sums[1], 64);
}

// Where the A tiles of columns [c0, c0 + cn) are: the 32 bytes of step (block i, piece k) of column c at
// a + i * step + 32 * k + c * stride. Whole groups of 16 are read in place; a last, partial group is
// copied to `padded` (16 * nb * qbytes bytes) with its last column repeated (those outputs are not stored).
struct ActTiles {
    const char* a;
    size_t stride, step;
};

inline ActTiles activation_tiles(const char* y, size_t by, int c0, int cn, int64_t nb, size_t qs_offset,
                                 size_t block_bytes, size_t qbytes, int8_t* padded) {
    if (cn == kCols) return {y + size_t(c0) * by + qs_offset, by, block_bytes};
    for (int c = 0; c < kCols; ++c) {
        const char* col = y + size_t(c0 + std::min(c, cn - 1)) * by + qs_offset;
        for (int64_t i = 0; i < nb; ++i)
            std::memcpy(padded + (size_t(c) * size_t(nb) + size_t(i)) * qbytes, col + size_t(i) * block_bytes,
                        qbytes);
    }
    asm volatile("" ::: "memory");  // the copies are written before the tile loads read them
    return {reinterpret_cast<const char*>(padded), size_t(nb) * qbytes, qbytes};
}

}  // namespace
}  // namespace ggml::cpu
