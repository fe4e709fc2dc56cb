// Tile kernels for the 32-value block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL) on AMX: the
// integer block sums come from the tile unit, the float steps from AVX-512.
//
// Per 32-value block, one tdpbssd multiplies tile A, 16 activation columns of 32 signed bytes (read
// straight from the Q8_0/Q8_1 rows), by tile B, 16 weight rows as signed levels in the VNNI layout
// (B row j, dword r = values 4j .. 4j+3 of weight row r). C row c, lane r then holds the exact int32 sum of
// the block for (row r, column c): one block per instruction, so every block's sum stays separate. The sums
// are stored and scaled lane-wise in the reference's steps and order, acc += (dx * dy) * float(isum)
// [+ m * s], so every output equals vec_dot (and the AVX-512 tile) bit for bit.
//
// Weight blocks are unpacked into the B layout once per call and reused by every column group (the tile
// steps shared with the K-quant kernels are in kernels_x86_amx.h).
#include "kernels_x86_intrin.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"
#include "kernels_levels.h"
#include "kernels_simd_target.h"

#if defined(__x86_64__)
GGML_TARGET_AMX_BEGIN
#include "kernels_x86_amx.h"
#include "kernels_x86_gemm.h"
#include "kernels_x86_rows16.h"

namespace ggml::cpu {
namespace {

// One block of 16 weight rows in the B layout with their scales as floats.
struct alignas(64) PackedBlock {
    int8_t q[kQuants * kRows];
    float d[kRows];
    float m[kRows];  // Q4_1, Q5_1
};

// Unpacks blocks [0, nb) of the 16 rows into signed levels: the decoders give u = level + kOffset.
template <class D>
void pack_rows(PackedBlock* out, const typename D::Block* const rows[kRows], int64_t nb) {
    const __m512i offset = _mm512_set1_epi8(char(D::kOffset));
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* bytes[kRows];
        uint16_t d[kRows], m[kRows];
        for (int t = 0; t < kRows; ++t) {
            bytes[t] = reinterpret_cast<const uint8_t*>(&rows[t][i]);
            d[t] = rows[t][i].d;
            if constexpr (D::kHasMin) m[t] = rows[t][i].m;
        }
        const Rows16 u = D::quants(RowsBytes16{bytes});
        for (int j = 0; j < 8; ++j) _mm512_store_si512(out[i].q + 64 * j, _mm512_sub_epi8(u.v[j], offset));
        _mm512_store_ps(out[i].d, halves16(d));
        if constexpr (D::kHasMin) _mm512_store_ps(out[i].m, halves16(m));
    }
}

// acc[c] (lanes: the 16 rows) += the block's scaled sums: the reference's float steps.
template <class D>
inline void scale_block(float* acc, const int32_t* sums, const PackedBlock& w, const ColumnPrep* p) {
    const __m512 dx = _mm512_load_ps(w.d);
    for (int c = 0; c < kCols; ++c) {
        const __m512 isum = _mm512_cvtepi32_ps(_mm512_load_si512(sums + kRows * c));
        __m512 t = _mm512_mul_ps(_mm512_mul_ps(dx, _mm512_set1_ps(p[c].dy)), isum);
        if constexpr (D::kHasMin)
            t = _mm512_add_ps(t, _mm512_mul_ps(_mm512_load_ps(w.m), _mm512_set1_ps(p[c].s)));
        _mm512_store_ps(acc + kRows * c, _mm512_add_ps(_mm512_load_ps(acc + kRows * c), t));
    }
}

template <class D>
void gemm_blocks32(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* vy, size_t by,
                   int nr, int nc) {
    using Block = typename D::Block;
    using Act = typename D::Act;
    const int64_t nb = n / kQuants;
    const char* y = static_cast<const char*>(vy);
    const int groups = (nr + kRows - 1) / kRows;

    // Scratch of this thread, reached through plain pointers in the loops: an access to a thread_local
    // can be a call (__tls_get_addr), which would spill the accumulators.
    thread_local std::vector<PackedBlock> packed_scratch;
    thread_local std::vector<ColumnPrep> prep_scratch;
    thread_local std::vector<int8_t> padded_scratch;
    packed_scratch.resize(size_t(groups) * size_t(nb));
    PackedBlock* const packed = packed_scratch.data();
    for (int g = 0; g < groups; ++g) {
        const Block* rows[kRows];
        tile_rows<Block, kRows>(rows, x, bx, g * kRows, nr);
        pack_rows<D>(packed + size_t(g) * size_t(nb), rows, nb);
    }
    prepare_columns<D>(prep_scratch, y, by, nc, nb, false);
    prep_scratch.resize(size_t(nb) * size_t(nc) + kCols);  // a partial last group reads past its columns
    const ColumnPrep* const prep = prep_scratch.data();
    asm volatile("" ::: "memory");  // the packed blocks are written before the tile loads read them
    if (nc % kCols) padded_scratch.resize(size_t(kCols) * size_t(nb) * kQuants);
    int8_t* const padded = padded_scratch.data();

    alignas(64) int32_t sums[2][2][kCols * kRows];  // [block parity][group of the pair]
    for (int c0 = 0; c0 < nc; c0 += kCols) {
        const int cn = std::min(kCols, nc - c0);
        const ActTiles at =
            activation_tiles(y, by, c0, cn, nb, offsetof(Act, qs), sizeof(Act), kQuants, padded);
        // Row groups in pairs (an odd last group is paired with itself, and stored once).
        for (int g = 0; g < groups; g += 2) {
            const bool pair = g + 1 < groups;
            const PackedBlock* w0 = packed + size_t(g) * size_t(nb);
            const PackedBlock* w1 = pair ? w0 + nb : w0;
            alignas(64) float acc[2][kCols * kRows] = {};
            // Block i + 1's products run while block i is scaled.
            issue(at.a, at.stride, w0[0].q, w1[0].q);
            store(sums[0]);
            for (int64_t i = 0; i < nb; ++i) {
                const bool next = i + 1 < nb;
                if (next) issue(at.a + size_t(i + 1) * at.step, at.stride, w0[i + 1].q, w1[i + 1].q);
                const ColumnPrep* p = prep + size_t(i) * size_t(nc) + size_t(c0);
                scale_block<D>(acc[0], sums[i % 2][0], w0[i], p);
                if (pair) scale_block<D>(acc[1], sums[i % 2][1], w1[i], p);
                if (next) store(sums[(i + 1) % 2]);
            }
            for (int k = 0; k < (pair ? 2 : 1); ++k) {
                const int rows = std::min(kRows, nr - (g + k) * kRows);
                const __mmask16 mask = __mmask16((1u << rows) - 1);
                for (int c = 0; c < cn; ++c)
                    _mm512_mask_storeu_ps(s + size_t(c0 + c) * ldc + size_t((g + k) * kRows), mask,
                                          _mm512_load_ps(acc[k] + kRows * c));
            }
        }
    }
}

}  // namespace

namespace amx {
#define GGML_GEMM(name, decode)                                                                           \
    void gemm_##name(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* y, size_t by, \
                     int nr, int nc) {                                                                    \
        if (nc < kMinColumns || !thread_ready())                                                          \
            return avx512::gemm_##name(n, s, ldc, x, bx, y, by, nr, nc);                                  \
        gemm_blocks32<decode>(n, s, ldc, x, bx, y, by, nr, nc);                                           \
    }
GGML_GEMM(q4_0, DecodeQ4_0)
GGML_GEMM(q4_1, DecodeQ4_1)
GGML_GEMM(q5_0, DecodeQ5_0)
GGML_GEMM(q5_1, DecodeQ5_1)
GGML_GEMM(q8_0, DecodeQ8_0)
GGML_GEMM(iq4_nl, DecodeIQ4_NL)
#undef GGML_GEMM
}  // namespace amx

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
