// Tile kernels for block-quantized weights at the AVX2 level: 8 rows per tile in the lanes of 256-bit
// vectors, byte products with vpmaddubsw. Bit-identical to the reference (kernels_x86_gemm.h).
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
GGML_TARGET_AVX2_BEGIN
#include "kernels_x86_gemm.h"
#include "kernels_x86_rows8.h"

namespace ggml::cpu {
namespace {

constexpr int kRows = 8;

inline __m256i bcast32(const void* p) {
    return _mm256_set1_epi32(load_i32(p));
}

// How many vpmaddubsw results (pair sums of u * y, |y| <= 128) add up in int16 without overflow.
constexpr int pairs_per_madd(int max_u) {
    return 32767 / (max_u * 256);
}

// sum over j in [j0, j1) of the byte products of w[j] with the broadcast bytes y[4j .. 4j+3], each
// int16 pair sum multiplied by `scale` into int32 lanes.
template <int kMaxU>
inline __m256i dot_words(const __m256i* w, const int8_t* y, int j0, int j1, __m256i scale) {
    constexpr int kPairs = pairs_per_madd(kMaxU);
    __m256i acc = _mm256_setzero_si256();
    for (int j = j0; j < j1; j += kPairs) {
        __m256i t = _mm256_maddubs_epi16(w[j], bcast32(y + 4 * j));
        for (int l = j + 1; l < std::min(j + kPairs, j1); ++l)
            t = _mm256_add_epi16(t, _mm256_maddubs_epi16(w[l], bcast32(y + 4 * l)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(t, scale));
    }
    return acc;
}

inline void store_rows(float* s, const __m256 v, int rows) {
    if (rows == kRows) {
        _mm256_storeu_ps(s, v);
        return;
    }
    alignas(32) float tmp[kRows];
    _mm256_store_ps(tmp, v);
    std::memcpy(s, tmp, size_t(rows) * sizeof(float));
}

// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4.
template <class D>
void gemm_blocks32(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* vy, size_t by,
                   int nr, int nc) {
    using Block = typename D::Block;
    using Act = typename D::Act;
    // Levels beyond 7 bits would overflow vpmaddubsw: those go signed, with the sign moved onto y.
    constexpr bool kSigned = D::kOffset == 128;
    const __m256i ones = _mm256_set1_epi16(1);
    const int64_t nb = n / 32;
    const char* y = static_cast<const char*>(vy);
    thread_local std::vector<ColumnPrep> prep;
    for (int c0 = 0; c0 < nc; c0 += kTileColumns) {
        const int cn = std::min(kTileColumns, nc - c0);
        prepare_columns<D>(prep, y + size_t(c0) * by, by, cn, nb, D::kOffset != 0 && !kSigned);
        for (int r0 = 0; r0 < nr; r0 += kRows) {
            const Block* rows[kRows];
            tile_rows<Block, kRows>(rows, x, bx, r0, nr);
            __m256 acc[kTileColumns];
            for (int c = 0; c < cn; ++c) acc[c] = _mm256_setzero_ps();
            for (int64_t i = 0; i < nb; ++i) {
                if (i % 4 == 0) prefetch_rows<Block, kRows>(rows, i, nb, 8, 4);
                const uint8_t* bytes[kRows];
                uint16_t d[kRows] = {}, m[kRows];
                alignas(32) float e[kRows];  // E8M0 scales (MXFP4)
                for (int t = 0; t < kRows; ++t) {
                    bytes[t] = reinterpret_cast<const uint8_t*>(&rows[t][i]);
                    if constexpr (kE8M0Scale<D>)
                        e[t] = mxfp4_half_scale(rows[t][i].e);
                    else
                        d[t] = rows[t][i].d;
                    if constexpr (D::kHasMin) m[t] = rows[t][i].m;
                }
                // All 8 rows decoded at once from their transposed bytes.
                Rows8 quants = D::quants(RowsBytes8{bytes});
                __m256i* w = quants.v;
                __m256i aw[8];
                if constexpr (kSigned) {
                    for (int j = 0; j < 8; ++j) {
                        w[j] = flip_sign_bits(w[j]);  // back to signed levels
                        aw[j] = _mm256_abs_epi8(w[j]);
                    }
                }
                const __m256 dx = kE8M0Scale<D> ? _mm256_load_ps(e) : halves8(d);
                const __m256 mx = D::kHasMin ? halves8(m) : _mm256_setzero_ps();
                const ColumnPrep* p = &prep[size_t(i) * size_t(cn)];
                for (int c = 0; c < cn; ++c) {
                    const int8_t* q = reinterpret_cast<const Act*>(y + size_t(c0 + c) * by)[i].qs;
                    __m256i isum;
                    if constexpr (kSigned) {
                        isum = _mm256_setzero_si256();
                        for (int j = 0; j < 8; ++j) {
                            const __m256i t =
                                _mm256_maddubs_epi16(aw[j], _mm256_sign_epi8(bcast32(q + 4 * j), w[j]));
                            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(t, ones));
                        }
                    } else {
                        isum = _mm256_add_epi32(_mm256_set1_epi32(p[c].neg_offset_sum),
                                                dot_words<D::kMaxU>(w, q, 0, 8, ones));
                    }
                    __m256 t =
                        _mm256_mul_ps(_mm256_mul_ps(dx, _mm256_set1_ps(p[c].dy)), _mm256_cvtepi32_ps(isum));
                    if constexpr (D::kHasMin) t = _mm256_add_ps(t, _mm256_mul_ps(mx, _mm256_set1_ps(p[c].s)));
                    acc[c] = _mm256_add_ps(acc[c], t);
                }
            }
            const int rows_here = std::min(kRows, nr - r0);
            for (int c = 0; c < cn; ++c) store_rows(s + size_t(c0 + c) * ldc + r0, acc[c], rows_here);
        }
    }
}

// Per-row scale words of a super-block, transposed: sc[k] lane r = (sc[2k], sc[2k+1]) of row r, and
// cor[k] likewise for the correction multipliers.
template <class D>
void tile_scales(const typename D::Block* const rows[kRows], int64_t i, __m256i sc[8], __m256i cor[8]) {
    __m256i s16[kRows], c16[kRows];
    for (int t = 0; t < kRows; ++t) D::scales(rows[t][i], &s16[t], &c16[t]);
    transpose8x8_i32(s16, sc);
    transpose8x8_i32(c16, cor);
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
            __m256 acc[kTileColumns];
            __m256i isum[kTileColumns];
            for (int c = 0; c < cn; ++c) acc[c] = _mm256_setzero_ps();
            for (int64_t i = 0; i < nb; ++i) {
                prefetch_rows<Block, kRows>(rows, i, nb, 2, 1);
                __m256i sc[8], cor[8];
                tile_scales<D>(rows, i, sc, cor);
                uint16_t d[kRows], dmin[kRows];
                for (int t = 0; t < kRows; ++t) {
                    d[t] = rows[t][i].d;
                    if constexpr (D::kHasMins) dmin[t] = rows[t][i].dmin;
                }
                const __m256 dx = halves8(d);
                for (int c = 0; c < cn; ++c) isum[c] = _mm256_setzero_si256();
                // The quant bytes of the 8 rows, transposed once; the decoder then works on all rows at once.
                constexpr int kPieces = (D::kPiecesEnd - D::kPiecesBegin) / 32;
                Rows8 pieces[kPieces];
                for (int p = 0; p < kPieces; ++p) {
                    __m256i in[kRows];
                    for (int t = 0; t < kRows; ++t)
                        in[t] =
                            load256(reinterpret_cast<const uint8_t*>(&rows[t][i]) + D::kPiecesBegin + 32 * p);
                    transpose8x8_i32(in, pieces[p].v);
                }
                const PieceCache<Rows8> src{pieces, D::kPiecesBegin};
                for (int k = 0; k < 8; ++k) {
                    const Rows8 quants = D::quants(src, k);
                    const __m256i* w = quants.v;
                    // Word pairs (sc, sc) of groups 2k (bytes 0-15 of the chunk) and 2k + 1 (bytes 16-31).
                    const __m256i sa = _mm256_blend_epi16(sc[k], _mm256_slli_epi32(sc[k], 16), 0xAA);
                    const __m256i sb = _mm256_blend_epi16(_mm256_srli_epi32(sc[k], 16), sc[k], 0xAA);
                    for (int c = 0; c < cn; ++c) {
                        const int8_t* yq = q8k_block(y, by, c0 + c, i).qs + 32 * k;
                        __m256i add;
                        if constexpr (D::kGroup == 32)
                            add = dot_words<D::kMaxU>(w, yq, 0, 8, sa);
                        else
                            add = _mm256_add_epi32(dot_words<D::kMaxU>(w, yq, 0, 4, sa),
                                                   dot_words<D::kMaxU>(w, yq, 4, 8, sb));
                        isum[c] = _mm256_add_epi32(isum[c], add);
                    }
                }
                const __m256 dm = D::kHasMins ? halves8(dmin) : _mm256_setzero_ps();
                for (int c = 0; c < cn; ++c) {
                    const BlockQ8_K& a = q8k_block(y, by, c0 + c, i);
                    __m256i corr = _mm256_setzero_si256();
                    for (int k = 0; k < 8; ++k)
                        corr = _mm256_add_epi32(corr, _mm256_madd_epi16(cor[k], bcast32(a.bsums + 2 * k)));
                    const __m256 yd = _mm256_set1_ps(a.d);
                    __m256 t;
                    if constexpr (D::kHasMins)
                        t = _mm256_sub_ps(_mm256_mul_ps(_mm256_mul_ps(yd, dx), _mm256_cvtepi32_ps(isum[c])),
                                          _mm256_mul_ps(_mm256_mul_ps(yd, dm), _mm256_cvtepi32_ps(corr)));
                    else
                        t = _mm256_mul_ps(_mm256_mul_ps(yd, dx),
                                          _mm256_cvtepi32_ps(_mm256_add_epi32(isum[c], corr)));
                    acc[c] = _mm256_add_ps(acc[c], t);
                }
            }
            const int rows_here = std::min(kRows, nr - r0);
            for (int c = 0; c < cn; ++c) store_rows(s + size_t(c0 + c) * ldc + r0, acc[c], rows_here);
        }
    }
}

}  // namespace

namespace avx2 {
#define GGML_GEMM(name, engine, decode)                                                                   \
    void gemm_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, \
                     int nr, int nc) {                                                                    \
        engine<decode>(n, s, ldc, x, bx, y, by, nr, nc);                                                  \
    }
GGML_GEMM(q4_0, gemm_blocks32, DecodeQ4_0)
GGML_GEMM(q4_1, gemm_blocks32, DecodeQ4_1)
GGML_GEMM(q5_0, gemm_blocks32, DecodeQ5_0)
GGML_GEMM(q5_1, gemm_blocks32, DecodeQ5_1)
GGML_GEMM(q8_0, gemm_blocks32, DecodeQ8_0)
GGML_GEMM(iq4_nl, gemm_blocks32, DecodeIQ4_NL)
GGML_GEMM(mxfp4, gemm_blocks32, DecodeMXFP4)
GGML_GEMM(q2_K, gemm_superblocks, DecodeQ2_K)
GGML_GEMM(q3_K, gemm_superblocks, DecodeQ3_K)
GGML_GEMM(q4_K, gemm_superblocks, DecodeQ4_K)
GGML_GEMM(q5_K, gemm_superblocks, DecodeQ5_K)
GGML_GEMM(q6_K, gemm_superblocks, DecodeQ6_K)
#undef GGML_GEMM
}  // namespace avx2

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
