// Tile kernels for block-quantized weights at the AVX-512 level: 16 rows per tile in the lanes of
// 512-bit vectors, VNNI byte products (vpdpbusd). Bit-identical to the reference (kernels_x86_gemm.h).
#include "kernels_x86_intrin.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"
#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AVX512_BEGIN
#include "kernels_x86_gemm.h"
#include "kernels_x86_rows16.h"

namespace ggml::cpu {
namespace {

constexpr int kRows = 16;

inline __m512i bcast32(const void* p) {
    return _mm512_set1_epi32(load_i32(p));
}

inline __mmask16 row_mask(int r0, int nr) {
    const int rows = std::min(kRows, nr - r0);
    return __mmask16((1u << rows) - 1);
}

// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4.
template <class D>
void gemm_blocks32(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* vy, size_t by,
                   int nr, int nc) {
    using Block = typename D::Block;
    using Act = typename D::Act;
    const int64_t nb = n / 32;
    const char* y = static_cast<const char*>(vy);
    thread_local std::vector<ColumnPrep> prep;
    for (int c0 = 0; c0 < nc; c0 += kTileColumns) {
        const int cn = std::min(kTileColumns, nc - c0);
        prepare_columns<D>(prep, y + size_t(c0) * by, by, cn, nb, D::kOffset != 0);
        for (int r0 = 0; r0 < nr; r0 += kRows) {
            const Block* rows[kRows];
            tile_rows<Block, kRows>(rows, x, bx, r0, nr);
            __m512 acc[kTileColumns];
            for (int c = 0; c < cn; ++c) acc[c] = _mm512_setzero_ps();
            for (int64_t i = 0; i < nb; ++i) {
                if (i % 4 == 0) prefetch_rows<Block, kRows>(rows, i, nb, 8, 4);
                const uint8_t* bytes[kRows];
                uint16_t d[kRows] = {}, m[kRows];
                alignas(64) float e[kRows];  // E8M0 scales (MXFP4)
                for (int t = 0; t < kRows; ++t) {
                    bytes[t] = reinterpret_cast<const uint8_t*>(&rows[t][i]);
                    if constexpr (kE8M0Scale<D>)
                        e[t] = mxfp4_half_scale(rows[t][i].e);
                    else
                        d[t] = rows[t][i].d;
                    if constexpr (D::kHasMin) m[t] = rows[t][i].m;
                }
                // All 16 rows decoded at once from their transposed bytes.
                const Rows16 quants = D::quants(RowsBytes16{bytes});
                const __m512i* w = quants.v;
                const __m512 dx = kE8M0Scale<D> ? _mm512_load_ps(e) : halves16(d);
                const __m512 mx = D::kHasMin ? halves16(m) : _mm512_setzero_ps();
                const ColumnPrep* p = &prep[size_t(i) * size_t(cn)];
                for (int c = 0; c < cn; ++c) {
                    const int8_t* q = reinterpret_cast<const Act*>(y + size_t(c0 + c) * by)[i].qs;
                    __m512i isum = _mm512_set1_epi32(p[c].neg_offset_sum);
                    for (int j = 0; j < 8; ++j) isum = _mm512_dpbusd_epi32(isum, w[j], bcast32(q + 4 * j));
                    // (dx * dy) * isum [+ m * s], then added to the sum: the reference's steps.
                    __m512 t =
                        _mm512_mul_ps(_mm512_mul_ps(dx, _mm512_set1_ps(p[c].dy)), _mm512_cvtepi32_ps(isum));
                    if constexpr (D::kHasMin) t = _mm512_add_ps(t, _mm512_mul_ps(mx, _mm512_set1_ps(p[c].s)));
                    acc[c] = _mm512_add_ps(acc[c], t);
                }
            }
            const __mmask16 mask = row_mask(r0, nr);
            for (int c = 0; c < cn; ++c) _mm512_mask_storeu_ps(s + size_t(c0 + c) * ldc + r0, mask, acc[c]);
        }
    }
}

// Per-row scale words of a super-block, transposed: sc[k] lane r = (sc[2k], sc[2k+1]) of row r, and
// cor[k] likewise for the correction multipliers.
template <class D>
void tile_scales(const typename D::Block* const rows[kRows], int64_t i, __m512i sc[8], __m512i cor[8]) {
    __m256i s16[kRows], c16[kRows];
    for (int t = 0; t < kRows; ++t) D::scales(rows[t][i], &s16[t], &c16[t]);
    transpose16x8_i32(s16, sc);
    transpose16x8_i32(c16, cor);
}

// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
template <class D>
void gemm_superblocks(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by,
                      int nr, int nc) {
    using Block = typename D::Block;
    const int64_t nb = n / QK_K;
    for (int c0 = 0; c0 < nc; c0 += kTileColumns) {
        const int cn = std::min(kTileColumns, nc - c0);
        for (int r0 = 0; r0 < nr; r0 += kRows) {
            const Block* rows[kRows];
            tile_rows<Block, kRows>(rows, x, bx, r0, nr);
            __m512 acc[kTileColumns];
            __m512i isum[kTileColumns];
            for (int c = 0; c < cn; ++c) acc[c] = _mm512_setzero_ps();
            for (int64_t i = 0; i < nb; ++i) {
                prefetch_rows<Block, kRows>(rows, i, nb, 2, 1);
                __m512i sc[8], cor[8];
                tile_scales<D>(rows, i, sc, cor);
                uint16_t d[kRows], dmin[kRows];
                for (int t = 0; t < kRows; ++t) {
                    d[t] = rows[t][i].d;
                    if constexpr (D::kHasMins) dmin[t] = rows[t][i].dmin;
                }
                const __m512 dx = halves16(d);
                for (int c = 0; c < cn; ++c) isum[c] = _mm512_setzero_si512();
                // The quant bytes of the 16 rows, transposed once; the decoder then works on all rows at
                // once.
                constexpr int kPieces = (D::kPiecesEnd - D::kPiecesBegin) / 32;
                const uint8_t* bytes[kRows];
                for (int t = 0; t < kRows; ++t) bytes[t] = reinterpret_cast<const uint8_t*>(&rows[t][i]);
                Rows16 pieces[kPieces];
                for (int p = 0; p < kPieces; ++p)
                    pieces[p] = transpose_rows16(bytes, size_t(D::kPiecesBegin + 32 * p));
                const PieceCache<Rows16> src{pieces, D::kPiecesBegin};
                for (int k = 0; k < 8; ++k) {
                    const Rows16 quants = D::quants(src, k);
                    const __m512i* w = quants.v;
                    // Scales of groups 2k (bytes 0-15 of the chunk) and 2k + 1 (bytes 16-31).
                    const __m512i sa = _mm512_srai_epi32(_mm512_slli_epi32(sc[k], 16), 16);
                    const __m512i sb = _mm512_srai_epi32(sc[k], 16);
                    for (int c = 0; c < cn; ++c) {
                        const int8_t* yq = q8k_block(y, by, c0 + c, i).qs + 32 * k;
                        __m512i pa = _mm512_setzero_si512(), pb = _mm512_setzero_si512();
                        for (int j = 0; j < 4; ++j) pa = _mm512_dpbusd_epi32(pa, w[j], bcast32(yq + 4 * j));
                        for (int j = 4; j < 8; ++j) pb = _mm512_dpbusd_epi32(pb, w[j], bcast32(yq + 4 * j));
                        __m512i add;
                        if constexpr (D::kGroup == 32)  // one scale for the whole chunk
                            add = _mm512_mullo_epi32(_mm512_add_epi32(pa, pb), sa);
                        else
                            add = _mm512_add_epi32(_mm512_mullo_epi32(pa, sa), _mm512_mullo_epi32(pb, sb));
                        isum[c] = _mm512_add_epi32(isum[c], add);
                    }
                }
                const __m512 dm = D::kHasMins ? halves16(dmin) : _mm512_setzero_ps();
                for (int c = 0; c < cn; ++c) {
                    const BlockQ8_K& a = q8k_block(y, by, c0 + c, i);
                    __m512i corr = _mm512_setzero_si512();
                    for (int k = 0; k < 8; ++k)
                        corr = _mm512_dpwssd_epi32(corr, cor[k], bcast32(a.bsums + 2 * k));
                    const __m512 yd = _mm512_set1_ps(a.d);
                    __m512 t;
                    if constexpr (D::kHasMins)
                        t = _mm512_sub_ps(_mm512_mul_ps(_mm512_mul_ps(yd, dx), _mm512_cvtepi32_ps(isum[c])),
                                          _mm512_mul_ps(_mm512_mul_ps(yd, dm), _mm512_cvtepi32_ps(corr)));
                    else
                        t = _mm512_mul_ps(_mm512_mul_ps(yd, dx),
                                          _mm512_cvtepi32_ps(_mm512_add_epi32(isum[c], corr)));
                    acc[c] = _mm512_add_ps(acc[c], t);
                }
            }
            const __mmask16 mask = row_mask(r0, nr);
            for (int c = 0; c < cn; ++c) _mm512_mask_storeu_ps(s + size_t(c0 + c) * ldc + r0, mask, acc[c]);
        }
    }
}

}  // namespace

namespace avx512 {
#define GGML_GEMM(name, engine, decode)                                                                   \
    void gemm_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, \
                     int nr, int nc) {                                                                    \
        engine<decode>(n, s, ldc, x, bx, y, by, nr, nc);                                                  \
    }
// With up to max_columns activation columns (one: decode; a few: a step of several streams, a short draft)
// the types that have a decode kernel read each weight row once instead of transposing 16 rows per block.
#define GGML_GEMM_OR_DECODE(name, engine, decode, max_columns)                                            \
    void gemm_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, \
                     int nr, int nc) {                                                                    \
        if (nc <= max_columns) return decode_columns_##name(n, s, ldc, x, bx, y, by, nr, nc);             \
        engine<decode>(n, s, ldc, x, bx, y, by, nr, nc);                                                  \
    }
GGML_GEMM_OR_DECODE(q4_0, gemm_blocks32, DecodeQ4_0, kMaxDecodeColumns)
GGML_GEMM_OR_DECODE(q4_1, gemm_blocks32, DecodeQ4_1, kMaxDecodeColumns)
GGML_GEMM_OR_DECODE(q5_0, gemm_blocks32, DecodeQ5_0, kMaxDecodeColumns)
GGML_GEMM_OR_DECODE(q5_1, gemm_blocks32, DecodeQ5_1, kMaxDecodeColumns)
GGML_GEMM_OR_DECODE(q8_0, gemm_blocks32, DecodeQ8_0, kMaxDecodeColumns)
GGML_GEMM_OR_DECODE(iq4_nl, gemm_blocks32, DecodeIQ4_NL, kMaxDecodeColumns)
GGML_GEMM_OR_DECODE(mxfp4, gemm_blocks32, DecodeMXFP4, kMaxDecodeColumns)
GGML_GEMM(q2_K, gemm_superblocks, DecodeQ2_K)
GGML_GEMM(q3_K, gemm_superblocks, DecodeQ3_K)
GGML_GEMM_OR_DECODE(q4_K, gemm_superblocks, DecodeQ4_K, kMaxSuperblockDecodeColumns)
GGML_GEMM_OR_DECODE(q5_K, gemm_superblocks, DecodeQ5_K, kMaxSuperblockDecodeColumns)
GGML_GEMM_OR_DECODE(q6_K, gemm_superblocks, DecodeQ6_K, kMaxSuperblockDecodeColumns)
GGML_GEMM_OR_DECODE(iq4_xs, gemm_superblocks, DecodeIQ4_XS, kMaxSuperblockDecodeColumns)
#undef GGML_GEMM
#undef GGML_GEMM_OR_DECODE
}  // namespace avx512

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
