// Weighted sums of attention values over a chunk of queries (attn_chunk.h).
#include "attn_chunk.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "kv_blocks.h"

namespace ggml::cpu {

namespace {

size_t round64(size_t n) {
    return (n + 63) & ~size_t(63);
}

}  // namespace

size_t chunk_sums_scratch_bytes(int64_t d) {
    return round64((size_t)kChunkPiece * (size_t)d * sizeof(double)) +              // a piece's values
           round64((size_t)kChunkQueries * (size_t)kChunkPiece * sizeof(double)) +  // its weights per query
           round64((size_t)kChunkPiece * sizeof(float)) +                           // one query's, rounded
           round64((size_t)kChunkPiece * sizeof(uint16_t)) +                        // per row: who sees it
           round64((size_t)d * sizeof(float)) + 64;                                 // a value row as floats
}

void chunk_weighted_sums(const Tensor* v, int64_t v2, int64_t v3, const float* w, size_t w_stride, int nq,
                         const Tensor* blocks, int64_t q0, const RowBlocks* spans, void* scratch, double* accs) {
    const int64_t d = v->ne[0], n = v->ne[1];
    char* at = (char*)(((uintptr_t)scratch + 63) & ~uintptr_t(63));
    double* vd = (double*)at;
    double* wd = (double*)(at += round64((size_t)kChunkPiece * (size_t)d * sizeof(double)));
    float* wf = (float*)(at += round64((size_t)kChunkQueries * (size_t)kChunkPiece * sizeof(double)));
    uint16_t* seen_by = (uint16_t*)(at += round64((size_t)kChunkPiece * sizeof(float)));
    float* tmp = (float*)(at += round64((size_t)kChunkPiece * sizeof(uint16_t)));
    const bool round = v->type == Type::F16;

    RowBlocks seen[kChunkQueries];
    int64_t cursor[kChunkQueries] = {};
    for (int q = 0; q < nq; ++q)
        if (blocks) seen[q] = kv_blocks_row(blocks, q0 + q);
    std::fill(accs, accs + nq * d, 0.0);
    // The piece: rows [piece[k].first, piece[k].second) of the cache, packed one after another in vd.
    constexpr int kMaxSpans = kChunkPiece / kKvBlock + 1;
    std::pair<int64_t, int64_t> piece[kMaxSpans];
    int n_piece = 0;
    int64_t filled = 0;
    auto flush = [&]() {
        std::fill(seen_by, seen_by + filled, uint16_t(0));
        for (int q = 0; q < nq; ++q) {
            double* wq = wd + q * kChunkPiece;
            int64_t off = 0;
            for (int k = 0; k < n_piece; ++k) {
                const auto [i0, i1] = piece[k];
                bool visible = true;
                if (blocks) {  // with blocks, each span of the union is one block
                    const int64_t block = i0 / kKvBlock;
                    const RowBlocks& r = seen[q];
                    while (cursor[q] < r.count && r.index[cursor[q]] < block) ++cursor[q];
                    visible = cursor[q] < r.count && r.index[cursor[q]] == block;
                }
                if (visible) {
                    const int64_t len = i1 - i0;
                    const float* src = w + (size_t)q * w_stride + (size_t)i0;
                    if (round) {
                        std::memcpy(wf, src, (size_t)len * sizeof(float));
                        round_f16_row(wf, len);
                        src = wf;
                    }
                    weights_to_f64(src, len, q, wq + off, seen_by + off);
                }
                off += i1 - i0;
            }
        }
        weighted_sum_f64_add(filled, wd, kChunkPiece, seen_by, nq, vd, d, accs, (size_t)d);
        n_piece = 0;
        filled = 0;
    };
    for (int64_t s = 0; s < kv_spans(spans); ++s) {
        int64_t s0, s1;
        kv_span(spans, s, n, &s0, &s1);
        for (int64_t i0 = s0; i0 < s1;) {
            const int64_t i1 = std::min(s1, i0 + (kChunkPiece - filled));
            for (int64_t i = i0; i < i1; ++i)
                value_row_to_f64(v->type, v->row_ptr(i, v2, v3), vd + (filled + i - i0) * d, d, tmp);
            piece[n_piece++] = {i0, i1};
            filled += i1 - i0;
            i0 = i1;
            if (filled == kChunkPiece || n_piece == kMaxSpans) flush();
        }
    }
    if (filled > 0) flush();
}

}  // namespace ggml::cpu
