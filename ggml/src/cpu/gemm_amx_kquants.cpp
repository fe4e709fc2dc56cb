// Tile kernels for Q4_K and Q5_K weights (activations Q8_K) on AMX: the 32-value groups' integer sums from
// the tile unit (kernels_x86_amx.h), the rest from AVX-512.
//
// A super-block of 256 values is 8 steps of 32: each step's exact int32 sums (one tdpbssd per group of 16
// rows, the levels 0..31 as signed bytes) are multiplied by the step's 6-bit scale and added in int32, the
// mins' correction comes from the activation's bsums (vpdpwssd), and the float step per super-block is the
// reference's: acc += (dy * d) * float(isum) - (dy * dmin) * float(imins). Integer sums are exact in any
// order, so every output equals vec_dot bit for bit.
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

constexpr int kSteps = QK_K / kQuants;  // 32-value steps per super-block

// One super-block of 16 weight rows: per step the B tile, the scale (lane r: row r) and the mins' word
// pairs for vpdpwssd; the half scales as floats.
struct alignas(64) PackedSuper {
    int8_t q[kSteps][kQuants * kRows];
    int32_t sc[kSteps][kRows];
    int32_t mins[kSteps][kRows];
    float d[kRows];
    float dmin[kRows];
};

template <class D>
void pack_rows(PackedSuper* out, const typename D::Block* const rows[kRows], int64_t nb) {
    static_assert(D::kGroup == 32 && D::kLevelOffset == 0 && D::kHasMins && D::kMaxU <= 127);
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* bytes[kRows];
        uint16_t d[kRows], dmin[kRows];
        __m256i s16[kRows], m16[kRows];
        for (int t = 0; t < kRows; ++t) {
            bytes[t] = reinterpret_cast<const uint8_t*>(&rows[t][i]);
            d[t] = rows[t][i].d;
            dmin[t] = rows[t][i].dmin;
            D::scales(rows[t][i], &s16[t], &m16[t]);
        }
        __m512i sc[kSteps], mins[kSteps];
        transpose16x8_i32(s16, sc);
        transpose16x8_i32(m16, mins);
        constexpr int kPieces = (D::kPiecesEnd - D::kPiecesBegin) / 32;
        Rows16 pieces[kPieces];
        for (int p = 0; p < kPieces; ++p)
            pieces[p] = transpose_rows16(bytes, size_t(D::kPiecesBegin + 32 * p));
        const PieceCache<Rows16> src{pieces, D::kPiecesBegin};
        for (int k = 0; k < kSteps; ++k) {
            const Rows16 u = D::quants(src, k);
            for (int j = 0; j < 8; ++j) _mm512_store_si512(out[i].q[k] + 64 * j, u.v[j]);
            // One scale for the step's 32 values: the low word of the pair.
            _mm512_store_si512(out[i].sc[k], _mm512_srai_epi32(_mm512_slli_epi32(sc[k], 16), 16));
            _mm512_store_si512(out[i].mins[k], mins[k]);
        }
        _mm512_store_ps(out[i].d, halves16(d));
        _mm512_store_ps(out[i].dmin, halves16(dmin));
    }
}

// isum[c] (+)= sums[c] * scale of step k (k == 0 starts the super-block).
inline void scale_step(int32_t* isum, const int32_t* sums, const PackedSuper& w, int k) {
    const __m512i sc = _mm512_load_si512(w.sc[k]);
    for (int c = 0; c < kCols; ++c) {
        const __m512i t = _mm512_mullo_epi32(_mm512_load_si512(sums + kRows * c), sc);
        _mm512_store_si512(isum + kRows * c,
                           k == 0 ? t : _mm512_add_epi32(_mm512_load_si512(isum + kRows * c), t));
    }
}

// acc[c] += the super-block's float step, for columns cols[c].
inline void finish_super(float* acc, const int32_t* isum, const PackedSuper& w,
                         const BlockQ8_K* const act[kCols]) {
    const __m512 dx = _mm512_load_ps(w.d), dm = _mm512_load_ps(w.dmin);
    for (int c = 0; c < kCols; ++c) {
        const BlockQ8_K& a = *act[c];
        __m512i corr = _mm512_setzero_si512();
        for (int k = 0; k < kSteps; ++k)
            corr = _mm512_dpwssd_epi32(corr, _mm512_load_si512(w.mins[k]),
                                       _mm512_set1_epi32(load_i32(a.bsums + 2 * k)));
        const __m512 yd = _mm512_set1_ps(a.d);
        const __m512 t = _mm512_sub_ps(
            _mm512_mul_ps(_mm512_mul_ps(yd, dx), _mm512_cvtepi32_ps(_mm512_load_si512(isum + kRows * c))),
            _mm512_mul_ps(_mm512_mul_ps(yd, dm), _mm512_cvtepi32_ps(corr)));
        _mm512_store_ps(acc + kRows * c, _mm512_add_ps(_mm512_load_ps(acc + kRows * c), t));
    }
}

template <class D>
void gemm_superblocks(int64_t n, float* s, size_t ldc, const void* x, size_t bx, const void* vy, size_t by,
                      int nr, int nc) {
    using Block = typename D::Block;
    const int64_t nb = n / QK_K;
    const char* y = static_cast<const char*>(vy);
    const int groups = (nr + kRows - 1) / kRows;

    // Scratch of this thread, reached through plain pointers in the loops (see gemm_amx.cpp).
    thread_local std::vector<PackedSuper> packed_scratch;
    thread_local std::vector<int8_t> padded_scratch;
    packed_scratch.resize(size_t(groups) * size_t(nb));
    PackedSuper* const packed = packed_scratch.data();
    for (int g = 0; g < groups; ++g) {
        const Block* rows[kRows];
        tile_rows<Block, kRows>(rows, x, bx, g * kRows, nr);
        pack_rows<D>(packed + size_t(g) * size_t(nb), rows, nb);
    }
    if (nc % kCols) padded_scratch.resize(size_t(kCols) * size_t(nb) * QK_K);
    int8_t* const padded = padded_scratch.data();
    asm volatile("" ::: "memory");  // the packed blocks are written before the tile loads read them

    alignas(64) int32_t sums[2][2][kCols * kRows];  // [step parity][group of the pair]
    for (int c0 = 0; c0 < nc; c0 += kCols) {
        const int cn = std::min(kCols, nc - c0);
        const ActTiles at =
            activation_tiles(y, by, c0, cn, nb, offsetof(BlockQ8_K, qs), sizeof(BlockQ8_K), QK_K, padded);
        // Row groups in pairs (an odd last group is paired with itself, and stored once).
        for (int g = 0; g < groups; g += 2) {
            const bool pair = g + 1 < groups;
            const PackedSuper* w0 = packed + size_t(g) * size_t(nb);
            const PackedSuper* w1 = pair ? w0 + nb : w0;
            alignas(64) float acc[2][kCols * kRows] = {};
            alignas(64) int32_t isum[2][kCols * kRows];
            // Step j + 1's products run while step j is scaled.
            const int64_t steps = nb * kSteps;
            issue(at.a, at.stride, w0[0].q[0], w1[0].q[0]);
            store(sums[0]);
            for (int64_t j = 0; j < steps; ++j) {
                const int64_t i = j / kSteps;
                const int k = int(j % kSteps);
                const bool next = j + 1 < steps;
                if (next) {
                    const int64_t i1 = (j + 1) / kSteps;
                    const int k1 = int((j + 1) % kSteps);
                    issue(at.a + size_t(i1) * at.step + size_t(kQuants * k1), at.stride, w0[i1].q[k1],
                          w1[i1].q[k1]);
                }
                scale_step(isum[0], sums[j % 2][0], w0[i], k);
                if (pair) scale_step(isum[1], sums[j % 2][1], w1[i], k);
                if (k == kSteps - 1) {
                    const BlockQ8_K* act[kCols];
                    for (int c = 0; c < kCols; ++c) act[c] = &q8k_block(y, by, c0 + std::min(c, cn - 1), i);
                    finish_super(acc[0], isum[0], w0[i], act);
                    if (pair) finish_super(acc[1], isum[1], w1[i], act);
                }
                if (next) store(sums[(j + 1) % 2]);
            }
            for (int p = 0; p < (pair ? 2 : 1); ++p) {
                const int rows = std::min(kRows, nr - (g + p) * kRows);
                const __mmask16 mask = __mmask16((1u << rows) - 1);
                for (int c = 0; c < cn; ++c)
                    _mm512_mask_storeu_ps(s + size_t(c0 + c) * ldc + size_t((g + p) * kRows), mask,
                                          _mm512_load_ps(acc[p] + kRows * c));
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
        gemm_superblocks<decode>(n, s, ldc, x, bx, y, by, nr, nc);                                        \
    }
GGML_GEMM(q4_K, DecodeQ4_K)
GGML_GEMM(q5_K, DecodeQ5_K)
#undef GGML_GEMM
}  // namespace amx

}  // namespace ggml::cpu
GGML_TARGET_END
#endif
