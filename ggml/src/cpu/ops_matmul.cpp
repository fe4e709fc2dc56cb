// Matrix products: mul_mat (weights x activations) and mul_mat_t (attention values).
#include <algorithm>
#include <cstring>
#include <vector>

#include "attn_chunk.h"
#include "attn_kernels.h"
#include "kernels.h"
#include "kv_blocks.h"
#include "ops.h"

namespace ggml::cpu {

namespace {

// Activations of at most this many values (decode: one or a few tokens) are quantized by every share
// into its own scratch slot, which takes less time than a second phase's wait for the other threads.
constexpr int64_t kPrivateQuantMax = 8192;

bool needs_quant(const Tensor* t) {
    return t->src[1]->type != type_traits(t->src[0]->type).vec_dot_type;
}

bool private_quant(const Tensor* t) {
    return needs_quant(t) && t->src[1]->nelements() <= kPrivateQuantMax;
}

// Bytes of the quantized activations, rounded to a cache line.
size_t quant_bytes(const Tensor* t) {
    const Type vdt = type_traits(t->src[0]->type).vec_dot_type;
    return (row_size(vdt, t->src[1]->ne[0]) * (size_t)t->src[1]->nrows() + 63) & ~size_t(63);
}

}  // namespace

int mul_mat_phases(const Tensor* t) {
    return needs_quant(t) && !private_quant(t) ? 2 : 1;
}

size_t mul_mat_work_size(const Tensor* t, int nth) {
    if (!needs_quant(t)) return 0;
    return quant_bytes(t) * (private_quant(t) ? (size_t)nth : 1) + 64;
}

void op_mul_mat(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const Tensor* b = t->src[1];
    const Type vdt = type_traits(a->type).vec_dot_type;
    const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];

    // Activations to the paired type, once per batch (columns of a plane at a uniform stride), into the
    // scratch buffer: in phase 0, each share its rows, read by all shares in phase 1; or, for small
    // activations (private_quant), all rows by every share into its own slot, in the one phase.
    const char* bdata;
    size_t b_nb1, b_nb2, b_nb3;
    if (b->type == vdt) {
        bdata = (const char*)b->data;
        b_nb1 = b->nb[1], b_nb2 = b->nb[2], b_nb3 = b->nb[3];
    } else {
        const size_t rs = row_size(vdt, K);
        b_nb1 = rs, b_nb2 = rs * (size_t)N, b_nb3 = b_nb2 * (size_t)b->ne[2];
        const bool priv = private_quant(t);
        char* w =
            (char*)(((uintptr_t)p.wdata + 63) & ~uintptr_t(63)) + (priv ? quant_bytes(t) * (size_t)p.ith : 0);
        if (priv || p.phase == 0) {
            const auto quantize = quantize_activations(vdt);
            int64_t r0 = 0, r1 = b->nrows();
            if (!priv) split_rows(b->nrows(), p.ith, p.nth, &r0, &r1);
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t i1 = r % N, i2 = (r / N) % b->ne[2], i3 = r / (N * b->ne[2]);
                quantize((const float*)b->row_ptr(i1, i2, i3), w + i1 * b_nb1 + i2 * b_nb2 + i3 * b_nb3, K);
            }
            if (!priv) return;
        }
        bdata = w;
    }

    // Tiles of rows x columns. Each output element equals one vec_dot of a weight row and an
    // activation row whatever the tiling, so a token's result depends neither on the other tokens of the
    // batch nor on the thread count. Tiles are claimed dynamically.
    const GemmTileFn tile = gemm_tile_fn(a->type);
    const size_t ldc = t->nb[1] / sizeof(float);
    if (const Tensor* blocks = kv_blocks(t)) {
        // Attention scores with visible blocks: per run of adjacent columns (queries) that see the same
        // blocks, tiles of those blocks' rows only; other scores are left unwritten.
        constexpr int64_t kCols = 64;
        std::vector<int64_t> runs;  // first column of each run, then N
        for (int64_t j = 0; j < N; ++j) {
            bool same = j > 0 && j - runs.back() < kCols;
            if (same) {
                const RowBlocks x = kv_blocks_row(blocks, j - 1), y = kv_blocks_row(blocks, j);
                same = x.count == y.count && std::equal(x.index, x.index + x.count, y.index);
            }
            if (!same) runs.push_back(j);
        }
        runs.push_back(N);
        const int64_t n_runs = (int64_t)runs.size() - 1, n_planes = t->ne[2] * t->ne[3];
        for (int64_t c = p.counter->fetch_add(1); c < n_runs * n_planes; c = p.counter->fetch_add(1)) {
            const int64_t run = c % n_runs, plane = c / n_runs;
            const int64_t i12 = plane % t->ne[2], i13 = plane / t->ne[2];
            const int64_t c0 = runs[(size_t)run];
            const int nc = (int)(runs[(size_t)run + 1] - c0);
            const RowBlocks vis = kv_blocks_row(blocks, c0);
            for (int64_t s = 0; s < vis.count; ++s) {
                int64_t r0, r1, next0, next1;
                kv_span(&vis, s, M, &r0, &r1);
                // Adjacent blocks in one call (a causal prefix is one span): fewer, larger tiles.
                while (s + 1 < vis.count && (kv_span(&vis, s + 1, M, &next0, &next1), next0 == r1)) {
                    r1 = next1;
                    ++s;
                }
                float* dst = (float*)((char*)t->data + r0 * sizeof(float) + c0 * t->nb[1] + i12 * t->nb[2] +
                                      i13 * t->nb[3]);
                tile(K, dst, ldc, a->row_ptr(r0, i12 / r2, i13 / r3), a->nb[1],
                     bdata + c0 * b_nb1 + i12 * b_nb2 + i13 * b_nb3, b_nb1, (int)(r1 - r0), nc);
            }
        }
        return;
    }
    if (N == 1 && t->ne[2] * t->ne[3] == 1) {
        // A matrix-vector product (decode): row ranges claimed with guided sizes, a fraction of the rows
        // left, so that the shares end together (a thread that finishes early would leave memory
        // bandwidth unused) with few claims. The counter holds the next row; ranges start at multiples
        // of 16 rows.
        constexpr int64_t kMinRows = 16;
        int64_t r0 = p.counter->load(std::memory_order_relaxed);
        while (r0 < M) {
            int64_t n = std::max(kMinRows, ((M - r0) / (2 * p.nth)) & ~(kMinRows - 1));
            n = std::min(n, M - r0);
            if (!p.counter->compare_exchange_weak(r0, r0 + n, std::memory_order_relaxed)) continue;
            tile(K, (float*)t->data + r0, ldc, a->row_ptr(r0), a->nb[1], bdata, b_nb1, (int)n, 1);
            r0 = p.counter->load(std::memory_order_relaxed);
        }
        return;
    }
    constexpr int64_t kRows = 64;           // a multiple of the kernels' 16-row groups
    const int64_t kCols = N == 1 ? 1 : 64;  // activations of a tile stay in L2
    const int64_t row_tiles = (M + kRows - 1) / kRows, col_tiles = (N + kCols - 1) / kCols;
    const int64_t n_planes = t->ne[2] * t->ne[3];
    const int64_t n_chunks = row_tiles * col_tiles * n_planes;
    for (int64_t c = p.counter->fetch_add(1); c < n_chunks; c = p.counter->fetch_add(1)) {
        // Column tiles vary fastest: a row tile's weights are read from memory once, while the (smaller)
        // activations stay in cache.
        const int64_t ct = c % col_tiles, rt = (c / col_tiles) % row_tiles,
                      plane = c / (row_tiles * col_tiles);
        const int64_t i12 = plane % t->ne[2], i13 = plane / t->ne[2];
        const int64_t r0 = rt * kRows, c0 = ct * kCols;
        const int nr = (int)std::min(kRows, M - r0), nc = (int)std::min(kCols, N - c0);
        float* dst =
            (float*)((char*)t->data + r0 * sizeof(float) + c0 * t->nb[1] + i12 * t->nb[2] + i13 * t->nb[3]);
        tile(K, dst, ldc, a->row_ptr(r0, i12 / r2, i13 / r3), a->nb[1],
             bdata + c0 * b_nb1 + i12 * b_nb2 + i13 * b_nb3, b_nb1, nr, nc);
    }
}

size_t mul_mat_t_work_size(const Tensor* t, int nth) {
    const Tensor* a = t->src[0];
    const size_t D = (size_t)a->ne[0], I = (size_t)a->ne[1];
    const size_t per = (D * I + I + 16) * sizeof(float) + (D + 8) * sizeof(double) + 64 +  // one query
                       chunk_sums_scratch_bytes((int64_t)D) + (size_t)kChunkQueries * D * sizeof(double);
    return per * (size_t)nth;
}

void op_mul_mat_t(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];  // [D, I, ha, a3]: values (the V cache)
    const Tensor* b = t->src[1];  // [I, Q, hb, b3]: weights (softmax output)
    const Tensor* blocks = kv_blocks(t);  // with it, only the rows each query sees are read
    const int64_t D = a->ne[0], I = a->ne[1], Q = b->ne[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    const size_t per = mul_mat_t_work_size(t, 1);
    float* vals = (float*)((char*)p.wdata + per * (size_t)p.ith);  // [I, D] values as f32
    float* w = vals + D * I;                                       // one weight row
    double* acc = (double*)(((uintptr_t)(w + I) + 63) & ~uintptr_t(63));
    double* accs = acc + D + 8;                 // a chunk's sums
    void* chunk_scratch = accs + kChunkQueries * D;  // chunk_weighted_sums'
    // Several queries of a head share the values' conversion (weights read in place).
    const bool chunked = b->nb[0] == sizeof(float) && b->nb[1] % sizeof(float) == 0;
    const auto to_float = cpu::to_float(a->type);
    std::vector<int32_t> chunk_list;

    // Chunks of 16 query rows of one head: the head's values are converted once per chunk.
    constexpr int64_t kRows = kChunkQueries;
    const int64_t q_blocks = (Q + kRows - 1) / kRows, planes = b->ne[2] * b->ne[3];
    for (int64_t c = p.counter->fetch_add(1); c < q_blocks * planes; c = p.counter->fetch_add(1)) {
        const int64_t qb = c % q_blocks, plane = c / q_blocks;
        const int64_t h = plane % b->ne[2], h3 = plane / b->ne[2];
        const int64_t q0 = qb * kRows, q1 = std::min(Q, (qb + 1) * kRows);
        if (chunked && q1 - q0 > 1) {
            const RowBlocks any = blocks ? kv_blocks_union(blocks, q0, q1, I, chunk_list) : RowBlocks{};
            chunk_weighted_sums(a, h / r2, h3 / r3, (const float*)b->row_ptr(q0, h, h3), b->nb[1] / sizeof(float),
                                (int)(q1 - q0), blocks, q0, blocks ? &any : nullptr, chunk_scratch, accs);
            for (int64_t q = q0; q < q1; ++q) f64_to_f32_row(accs + (q - q0) * D, (float*)t->row_ptr(q, h, h3), D);
            continue;
        }

        const float* vf = nullptr;
        const uint16_t* vh = nullptr;  // f16 values, read as they are (converted inside the sum)
        size_t v_stride = (size_t)D;
        if (a->type == Type::F32 && a->nb[1] % sizeof(float) == 0) {
            vf = (const float*)a->row_ptr(0, h / r2, h3 / r3);
            v_stride = a->nb[1] / sizeof(float);
        } else if (a->type == Type::F16 && a->nb[1] % sizeof(uint16_t) == 0) {
            vh = (const uint16_t*)a->row_ptr(0, h / r2, h3 / r3);
            v_stride = a->nb[1] / sizeof(uint16_t);
        } else {
            // The rows some query of the chunk sees (all without blocks).
            const RowBlocks any = blocks ? kv_blocks_union(blocks, q0, q1, I, chunk_list) : RowBlocks{};
            for (int64_t s = 0; s < kv_spans(blocks ? &any : nullptr); ++s) {
                int64_t i0, i1;
                kv_span(blocks ? &any : nullptr, s, I, &i0, &i1);
                for (int64_t i = i0; i < i1; ++i) to_float(a->row_ptr(i, h / r2, h3 / r3), vals + i * D, D);
            }
            vf = vals;
        }
        for (int64_t q = q0; q < q1; ++q) {
            const char* wrow = b->row_ptr(q, h, h3);
            const RowBlocks rb = blocks ? kv_blocks_row(blocks, q) : RowBlocks{};
            const RowBlocks* vis = blocks ? &rb : nullptr;
            for (int64_t s = 0; s < kv_spans(vis); ++s) {
                int64_t i0, i1;
                kv_span(vis, s, I, &i0, &i1);
                if (b->nb[0] == sizeof(float))
                    std::memcpy(w + i0, wrow + i0 * sizeof(float), (size_t)(i1 - i0) * sizeof(float));
                else
                    for (int64_t i = i0; i < i1; ++i) w[i] = *(const float*)(wrow + i * b->nb[0]);
                // A product with f16 values rounds the weights to f16 (llama.cpp does the same).
                if (a->type == Type::F16) round_f16_row(w + i0, i1 - i0);
            }
            // Exact products summed in double and rounded to f32 once, as llama.cpp's f16 dot product
            // sums rows shorter than 64 cells; flash_attn repeats these steps. Zero weights (masked
            // cells) are skipped, so other sequences' cells never change the result.
            float* out = (float*)t->row_ptr(q, h, h3);
            if (vh)
                weighted_sum_f64(I, w, vh, v_stride, D, acc, out, vis);
            else
                weighted_sum_f64(I, w, vf, v_stride, D, acc, out, vis);
        }
    }
}

}  // namespace ggml::cpu
