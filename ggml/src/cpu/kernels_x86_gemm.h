// Shared parts of the AVX2 and AVX-512 tile kernels for block formats. Include inside a target region
// (see kernels_x86_vec.h), after <vector> and <algorithm>.
//
// A tile keeps one lane per weight row: the rows' blocks are unpacked and transposed so that a vector
// holds the same 4 bytes of every row, and each activation column meets them through broadcasts of its
// own 4 bytes. Every lane then holds the exact integer block sum of one (row, column), and the float
// steps run lane-wise in the reference's order, so each output equals the reference bit for bit.
#pragma once

#include "kernels_x86_decode.h"

namespace ggml::cpu {
namespace {

// Columns per pass: their float sums (one vector each) stay in L1.
constexpr int kTileColumns = 64;

// Per (block, column) values of a Q8_0/Q8_1 activation that every row group reuses.
struct ColumnPrep {
    float dy;
    float s;                 // Q8_1 only
    int32_t neg_offset_sum;  // -kOffset * sum of the block's quants, when the kernel wants it
};

inline int32_t sum_i8x32(const int8_t* q) {
    const __m256i p = _mm256_maddubs_epi16(_mm256_set1_epi8(1), load256(q));
    return hsum_i32(_mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}

// prep[i * nc + c] for block i of column c (columns by bytes apart).
template <class D>
void prepare_columns(std::vector<ColumnPrep>& prep, const char* y, size_t by, int nc, int64_t nb,
                     bool with_offset_sum) {
    prep.resize(size_t(nb) * size_t(nc));
    for (int c = 0; c < nc; ++c) {
        const auto* a = reinterpret_cast<const typename D::Act*>(y + size_t(c) * by);
        for (int64_t i = 0; i < nb; ++i) {
            ColumnPrep& p = prep[size_t(i) * size_t(nc) + size_t(c)];
            p.dy = half_to_float(a[i].d);
            p.s = 0;
            if constexpr (D::kHasMin) p.s = half_to_float(a[i].s);
            p.neg_offset_sum = with_offset_sum ? -D::kOffset * sum_i8x32(a[i].qs) : 0;
        }
    }
}

// Pointers to kRows rows starting at r0; rows past nr repeat the last one (their lanes are not stored).
template <class Block, int kRows>
void tile_rows(const Block* rows[kRows], const void* x, size_t bx, int r0, int nr) {
    for (int t = 0; t < kRows; ++t)
        rows[t] = reinterpret_cast<const Block*>(static_cast<const char*>(x) +
                                                 size_t(std::min(r0 + t, nr - 1)) * bx);
}

// Asks for blocks [i + ahead, i + ahead + count) of each row: a tile's interleaved row streams are more
// than the hardware prefetchers follow well.
template <class Block, int kRows>
void prefetch_rows(const Block* const rows[kRows], int64_t i, int64_t nb, int64_t ahead, int64_t count) {
    if (i + ahead + count > nb) return;
    for (int t = 0; t < kRows; ++t)
        for (size_t off = 0; off < size_t(count) * sizeof(Block); off += 64)
            _mm_prefetch(reinterpret_cast<const char*>(&rows[t][i + ahead]) + off, _MM_HINT_T0);
}

// A K-quant decoder's source in a tile: its 32-byte pieces from kPiecesBegin on, transposed.
template <class Rows>
struct PieceCache {
    const Rows* pieces;
    int begin;
    const Rows& bytes32(size_t offset) const { return pieces[(int(offset) - begin) / 32]; }
};

// The K-quant activation block i of column c.
inline const BlockQ8_K& q8k_block(const void* y, size_t by, int c, int64_t i) {
    return reinterpret_cast<const BlockQ8_K*>(static_cast<const char*>(y) + size_t(c) * by)[i];
}

}  // namespace
}  // namespace ggml::cpu
