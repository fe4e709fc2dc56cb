// Ops of mixture-of-experts routing: sum_rows, top_k and mul_mat_id (the products with the selected
// experts' matrices).
#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels.h"
#include "ops.h"

namespace ggml::cpu {

namespace {

template <typename F>
void for_rows_of(const ComputeParams& p, const Tensor* t, F&& f) {
    int64_t r0, r1;
    split_rows(t->nrows(), p.ith, p.nth, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t i1 = r % t->ne[1], i2 = (r / t->ne[1]) % t->ne[2], i3 = r / (t->ne[1] * t->ne[2]);
        f(i1, i2, i3);
    }
}

size_t round64(size_t n) {
    return (n + 63) & ~size_t(63);
}

}  // namespace

void op_sum_rows(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const size_t sa = a->nb[0] / sizeof(float);
    for_rows_of(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float* x = (const float*)a->row_ptr(i1, i2, i3);
        double sum = 0.0;
        for (int64_t i = 0; i < a->ne[0]; ++i) sum += (double)x[i * sa];
        *(float*)t->row_ptr(i1, i2, i3) = (float)sum;
    });
}

void op_top_k(const ComputeParams& p, Tensor* t) {
    const Tensor* a = t->src[0];
    const int k = t->param<int32_t>(0);
    const int64_t n = a->ne[0];
    const size_t sa = a->nb[0] / sizeof(float);
    std::vector<int32_t> idx((size_t)n);
    for_rows_of(p, t, [&](int64_t i1, int64_t i2, int64_t i3) {
        const float* x = (const float*)a->row_ptr(i1, i2, i3);
        std::iota(idx.begin(), idx.end(), 0);
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t l, int32_t r) {
            return x[l * sa] > x[r * sa] || (x[l * sa] == x[r * sa] && l < r);
        });
        std::copy(idx.begin(), idx.begin() + k, (int32_t*)t->row_ptr(i1, i2, i3));
    });
}

// mul_mat_id: the columns (token, selected slot) grouped by the expert they selected, so that each
// expert's matrix goes through the tile kernel once for all of its columns, as mul_mat's weights do
// (one vec_dot per output, the earlier form, read each expert's rows once per column: 9 times slower on
// a prefill). Each output is still one vec_dot of a weight row and an activation row, the same bits
// whatever the grouping, the tiling or the thread count.
namespace {

constexpr int64_t kIdRows = 64;  // rows of a tile: a multiple of the kernels' 16-row groups
constexpr int64_t kIdCols = 64;  // columns of a tile (activations stay in L2)
// Activations of at most this many values (decode) are gathered by every share into its own slot,
// which costs less than a second phase's wait; larger ones once, shared, in a first phase.
constexpr int64_t kIdPrivateMax = 8192;

struct ExpertColumns {
    std::vector<int32_t> start;  // per expert, its first column; start[n_expert] = the number of columns
    std::vector<int32_t> cols;   // column -> output row e + n_used * tok, grouped by expert, tokens in order
};

ExpertColumns group_by_expert(const Tensor* ids, int64_t n_expert) {
    const int64_t n_used = ids->ne[0], n_tokens = ids->ne[1];
    auto id = [&](int64_t e, int64_t tok) {
        const int32_t x = *(const int32_t*)((const char*)ids->data + e * ids->nb[0] + tok * ids->nb[1]);
        if (x < 0 || x >= n_expert) fatal("mul_mat_id: expert id out of range");
        return x;
    };
    ExpertColumns g;
    g.start.assign((size_t)n_expert + 1, 0);
    for (int64_t tok = 0; tok < n_tokens; ++tok)
        for (int64_t e = 0; e < n_used; ++e) ++g.start[(size_t)id(e, tok) + 1];
    for (int64_t x = 0; x < n_expert; ++x) g.start[(size_t)x + 1] += g.start[(size_t)x];
    std::vector<int32_t> next(g.start.begin(), g.start.end() - 1);
    g.cols.resize((size_t)(n_used * n_tokens));
    for (int64_t tok = 0; tok < n_tokens; ++tok)
        for (int64_t e = 0; e < n_used; ++e) g.cols[(size_t)next[(size_t)id(e, tok)]++] = (int32_t)(e + n_used * tok);
    return g;
}

bool id_private(const Tensor* t) {
    return t->src[2]->nelements() * t->src[1]->ne[0] <= kIdPrivateMax;
}

// Bytes of the gathered activations (one row per column, expert order), rounded to a cache line.
size_t id_gather_bytes(const Tensor* t) {
    const Type vdt = type_traits(t->src[0]->type).vec_dot_type;
    return round64(row_size(vdt, t->src[1]->ne[0]) * (size_t)t->src[2]->nelements());
}

}  // namespace

int mul_mat_id_phases(const Tensor* t) {
    return id_private(t) ? 1 : 2;
}

// The gathered activations (per share when private), then one output tile per share.
size_t mul_mat_id_work_size(const Tensor* t, int nth) {
    return id_gather_bytes(t) * (id_private(t) ? (size_t)nth : 1) +
           round64(kIdRows * kIdCols * sizeof(float)) * (size_t)nth + 64;
}

void op_mul_mat_id(const ComputeParams& p, Tensor* t) {
    const Tensor* as = t->src[0];  // [K, M, n_expert]
    const Tensor* b = t->src[1];   // [K, 1 or n_used, n_tokens]
    const Tensor* ids = t->src[2];  // I32 [n_used, n_tokens]
    const Type vdt = type_traits(as->type).vec_dot_type;
    const int64_t K = as->ne[0], M = as->ne[1], n_expert = as->ne[2], n_used = ids->ne[0];
    const size_t rs = row_size(vdt, K);
    const ExpertColumns g = group_by_expert(ids, n_expert);
    const int64_t n_cols = (int64_t)g.cols.size();

    // Phase 0 (or every share, private): the activation row of each column, in the paired type, at its
    // place in expert order.
    const bool priv = id_private(t);
    char* base = (char*)(((uintptr_t)p.wdata + 63) & ~uintptr_t(63));
    char* gathered = base + (priv ? id_gather_bytes(t) * (size_t)p.ith : 0);
    if (priv || p.phase == 0) {
        const auto quant = quantize_activations(vdt);
        int64_t c0 = 0, c1 = n_cols;
        if (!priv) split_rows(n_cols, p.ith, p.nth, &c0, &c1);
        for (int64_t c = c0; c < c1; ++c) {
            const int64_t e = g.cols[(size_t)c] % n_used, tok = g.cols[(size_t)c] / n_used;
            quant((const float*)b->row_ptr(b->ne[1] == 1 ? 0 : e, tok), gathered + (size_t)c * rs, K);
        }
        if (!priv) return;
    }

    // Tiles of (expert, row tile, column tile), claimed dynamically; column tiles vary fastest so that
    // a row tile of an expert's weights is read from memory once. Each tile goes to the share's scratch,
    // then to its columns' outputs.
    const int64_t row_tiles = (M + kIdRows - 1) / kIdRows;
    std::vector<int64_t> first_chunk((size_t)n_expert + 1, 0);
    for (int64_t x = 0; x < n_expert; ++x) {
        const int64_t nx = g.start[(size_t)x + 1] - g.start[(size_t)x];
        first_chunk[(size_t)x + 1] = first_chunk[(size_t)x] + row_tiles * ((nx + kIdCols - 1) / kIdCols);
    }
    float* tile_out = (float*)(base + id_gather_bytes(t) * (priv ? (size_t)p.nth : 1) +
                               round64(kIdRows * kIdCols * sizeof(float)) * (size_t)p.ith);
    const GemmTileFn tile = gemm_tile_fn(as->type);
    for (int64_t c = p.counter->fetch_add(1); c < first_chunk[(size_t)n_expert]; c = p.counter->fetch_add(1)) {
        const int64_t x = std::upper_bound(first_chunk.begin(), first_chunk.end(), c) - first_chunk.begin() - 1;
        const int64_t nx = g.start[(size_t)x + 1] - g.start[(size_t)x], col_tiles = (nx + kIdCols - 1) / kIdCols;
        const int64_t in = c - first_chunk[(size_t)x], ct = in % col_tiles, rt = in / col_tiles;
        const int64_t r0 = rt * kIdRows, c0 = g.start[(size_t)x] + ct * kIdCols;
        const int nr = (int)std::min(kIdRows, M - r0), nc = (int)std::min(kIdCols, nx - ct * kIdCols);
        tile(K, tile_out, kIdRows, as->row_ptr(r0, x), as->nb[1], gathered + (size_t)c0 * rs, rs, nr, nc);
        for (int j = 0; j < nc; ++j) {
            const int64_t col = g.cols[(size_t)(c0 + j)];
            float* y = (float*)t->row_ptr(col % n_used, col / n_used) + r0;
            std::copy(tile_out + (size_t)j * kIdRows, tile_out + (size_t)j * kIdRows + nr, y);
        }
    }
}

}  // namespace ggml::cpu
