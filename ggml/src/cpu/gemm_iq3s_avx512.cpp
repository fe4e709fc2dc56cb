// IQ3_S tiles at the AVX-512 level (prefill: several activation columns). Each 16-row tile's blocks are
// unpacked once into unsigned levels u = level + 16 (grid bytes gathered by their 9-bit indices, negated
// where the sign bit is set), transposed so that a vector holds 4 values of each of the 16 rows, and then
// meet every column with vpdpbusd. Per group of 32 the exact sum is scale * (sum(u * y) - 16 * sum(y)),
// per super-block (dx * dy) * isum is added in order: the reference's steps, bit for bit.
//
// With 2 or 3 columns the unpacking would cost more than it saves: the dot product per output; with one,
// each row is unpacked and multiplied as it streams.
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
#include "kernels_x86_avx512.h"
#include "kernels_x86_gemm.h"

namespace ggml::cpu {
namespace {

constexpr int kRows = 16;
constexpr int kColumns = 4;  // columns whose sums stay in registers
constexpr int kMinColumns = 4;

// One super-block of 16 rows, unpacked: w[8 * k + j] lane r = levels + 16 of values 32k + 4j .. + 3 of row
// r; scale[k] lane r = group k's multiplier 2s + 1; dx lane r = the block's d.
struct alignas(64) TileIQ3S {
    __m512i w[64];
    __m512i scale[8];
    __m512 dx;
};

// Row t's block into u[256] (values in order) and its 8 group multipliers into scales[k][t].
inline void unpack_row(const BlockIQ3_S& b, uint8_t u[256], int32_t scales[8][kRows], int t) {
    const __m512i sixteen = _mm512_set1_epi8(16);
    const __m512i bit_of = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int m = 0; m < 4; ++m) {
        // Entries 16m .. 16m + 15 (4 values each): index qs[e] | (bit e % 8 of qh[e / 8]) << 8.
        uint16_t high;
        std::memcpy(&high, b.qh + 2 * m, sizeof high);
        const __m512i hi_bits =
            _mm512_and_si512(_mm512_srlv_epi32(_mm512_set1_epi32(high), bit_of), _mm512_set1_epi32(1));
        const __m512i idx =
            _mm512_or_si512(_mm512_cvtepu8_epi32(load128(b.qs + 16 * m)), _mm512_slli_epi32(hi_bits, 8));
        const __m512i g = _mm512_i32gather_epi32(idx, reinterpret_cast<const int*>(iq::kIq3sGrid.v), 4);
        // Bit v of the signs is value v's.
        uint64_t neg;
        std::memcpy(&neg, b.signs + 8 * m, sizeof neg);
        const __m512i v = _mm512_mask_sub_epi8(_mm512_add_epi8(sixteen, g), __mmask64(neg), sixteen, g);
        _mm512_storeu_si512(u + 64 * m, v);
    }
    for (int k = 0; k < 8; ++k) scales[k][t] = 1 + 2 * ((b.scales[k / 2] >> (4 * (k % 2))) & 0xf);
}

void unpack_tile(const BlockIQ3_S* const rows[kRows], int64_t i, TileIQ3S& out) {
    alignas(64) uint8_t u[kRows][256];
    alignas(64) int32_t scales[8][kRows];
    alignas(64) float d[kRows];
    for (int t = 0; t < kRows; ++t) {
        unpack_row(rows[t][i], u[t], scales, t);
        d[t] = half_to_float(rows[t][i].d);
    }
    for (int k = 0; k < 8; ++k) {
        __m256i in[kRows];
        for (int t = 0; t < kRows; ++t) in[t] = load256(u[t] + 32 * k);
        transpose16x8_i32(in, out.w + 8 * k);
        out.scale[k] = _mm512_load_si512(scales[k]);
    }
    out.dx = _mm512_load_ps(d);
}

// One column: each row unpacked and multiplied as it streams (prefetched ahead, as the other decode
// kernels do); lanes 0-7 of a 64-value chunk m are group 2m, lanes 8-15 group 2m + 1.
void decode_rows(int64_t n, float* s, const void* vx, size_t bx, const void* vy, int nr) {
    const int64_t nb = n / QK_K;
    const auto* y = static_cast<const BlockQ8_K*>(vy);
    const auto* x = static_cast<const uint8_t*>(vx);
    const uint8_t* end = x + size_t(nr) * bx;
    for (int r = 0; r < nr; ++r) {
        const auto* row = reinterpret_cast<const BlockIQ3_S*>(x + size_t(r) * bx);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            prefetch_ahead(reinterpret_cast<const uint8_t*>(&row[i]), sizeof(BlockIQ3_S), end);
            alignas(64) uint8_t u[256];
            alignas(64) int32_t scales[8][kRows];
            unpack_row(row[i], u, scales, 0);
            __m512i acc = _mm512_setzero_si512();
            int32_t offset = 0;
            for (int m = 0; m < 4; ++m) {
                const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_load_si512(u + 64 * m),
                                                      _mm512_loadu_si512(y[i].qs + 64 * m));
                const __m512i sc =
                    _mm512_mask_blend_epi32(__mmask16(0xff00), _mm512_set1_epi32(scales[2 * m][0]),
                                            _mm512_set1_epi32(scales[2 * m + 1][0]));
                acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(sc, p));
            }
            for (int k = 0; k < 8; ++k) offset += scales[k][0] * (y[i].bsums[2 * k] + y[i].bsums[2 * k + 1]);
            const int32_t isum = _mm512_reduce_add_epi32(acc) - 16 * offset;
            const float dx = half_to_float(row[i].d);
            sum = add_block_term(sum, dx, y[i].d, isum);
        }
        s[r] = sum;
    }
}

}  // namespace

namespace avx512 {
void gemm_iq3_s(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, int nr,
                int nc) {
    if (nc == 1) return decode_rows(n, s, x, bx, y, nr);
    if (nc < kMinColumns)
        return scalar::gemm_by_vec_dot<avx2::vec_dot_iq3_s>(n, s, ldc, x, bx, y, by, nr, nc);
    const int64_t nb = n / QK_K;
    thread_local std::vector<TileIQ3S> tiles;
    tiles.resize(size_t(nb));
    for (int r0 = 0; r0 < nr; r0 += kRows) {
        const BlockIQ3_S* rows[kRows];
        tile_rows<BlockIQ3_S, kRows>(rows, x, bx, r0, nr);
        for (int64_t i = 0; i < nb; ++i) unpack_tile(rows, i, tiles[size_t(i)]);
        const __mmask16 mask = __mmask16((1u << std::min(kRows, nr - r0)) - 1);
        for (int c0 = 0; c0 < nc; c0 += kColumns) {
            const int cn = std::min(kColumns, nc - c0);
            __m512 acc[kColumns];
            for (int c = 0; c < cn; ++c) acc[c] = _mm512_setzero_ps();
            for (int64_t i = 0; i < nb; ++i) {
                const TileIQ3S& tile = tiles[size_t(i)];
                __m512i isum[kColumns];
                for (int c = 0; c < cn; ++c) isum[c] = _mm512_setzero_si512();
                for (int k = 0; k < 8; ++k) {
                    for (int c = 0; c < cn; ++c) {
                        const BlockQ8_K& a = q8k_block(y, by, c0 + c, i);
                        const int8_t* q = a.qs + 32 * k;
                        __m512i p = _mm512_set1_epi32(-16 * (a.bsums[2 * k] + a.bsums[2 * k + 1]));
                        for (int j = 0; j < 8; ++j)
                            p = _mm512_dpbusd_epi32(p, tile.w[8 * k + j],
                                                    _mm512_set1_epi32(load_i32(q + 4 * j)));
                        isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(tile.scale[k], p));
                    }
                }
                for (int c = 0; c < cn; ++c) {
                    const __m512 dy = _mm512_set1_ps(q8k_block(y, by, c0 + c, i).d);
                    acc[c] = _mm512_add_ps(
                        acc[c], _mm512_mul_ps(_mm512_mul_ps(tile.dx, dy), _mm512_cvtepi32_ps(isum[c])));
                }
            }
            for (int c = 0; c < cn; ++c) _mm512_mask_storeu_ps(s + size_t(c0 + c) * ldc + r0, mask, acc[c]);
        }
    }
}
}  // namespace avx512

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
