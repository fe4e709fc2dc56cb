// The IQ3_XXS and IQ3_S quantizers without importance weights: ggml's quantize_row_iq3_xxs_impl and
// quantize_row_iq3_s_impl with w = x^2, operation by operation (same expressions, same order), so the
// bytes match llama-quantize's. Each group of 32 takes the magnitudes of its values (the signs are stored
// apart), tries a range of scales, rounds every 4 magnitudes to the lattice of odd levels 1 .. 15 and,
// where that point is not in the grid, to the best of its nearest grid points; the best fit wins.
#include <algorithm>
#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "ggml/iq_grids.h"
#include "ggml/quants.h"
#include "scale_search.h"

namespace ggml {

namespace {

using quant_detail::nearest_int;

constexpr int kMaxQ = 8;           // levels per coordinate: 2 l + 1, l = 0 .. 7
constexpr int kLatticeSize = 4096;  // 8^4 points, coordinate i in bits 3i .. 3i + 2

// A grid with its lookup tables: the grid index of every lattice point on the grid, and for every other
// point the grid points at its `nwant` smallest distinct squared distances, nearest first (ties by
// grid index), as ggml's iq3xs_init_impl builds them.
struct Iq3Grid {
    std::vector<uint16_t> points;  // lattice point of each grid entry
    int map[kLatticeSize];         // grid index, or -1
    std::vector<uint16_t> neighbours[kLatticeSize];

    Iq3Grid(const uint64_t* bits, int nwant) {
        for (int u = 0; u < kLatticeSize; ++u) {
            map[u] = -1;
            if ((bits[u / 64] >> (u % 64)) & 1) {
                map[u] = int(points.size());
                points.push_back(uint16_t(u));
            }
        }
        std::vector<std::pair<int, int>> dist(points.size());
        for (int u = 0; u < kLatticeSize; ++u) {
            if (map[u] >= 0) continue;
            for (size_t j = 0; j < points.size(); ++j) {
                int d2 = 0;
                for (int k = 0; k < 4; ++k) {
                    const int diff = 2 * coordinate(points[j], k) - 2 * coordinate(uint16_t(u), k);
                    d2 += diff * diff;
                }
                dist[j] = {d2, int(j)};
            }
            std::sort(dist.begin(), dist.end());
            int d2 = dist[0].first, nhave = 1;
            for (const auto& [dj, j] : dist) {
                if (dj > d2) {
                    if (nhave == nwant) break;
                    d2 = dj;
                    ++nhave;
                }
                neighbours[u].push_back(uint16_t(j));
            }
        }
    }
    static int coordinate(uint16_t point, int k) { return (point >> (3 * k)) & 7; }
    // Odd level 2 l + 1 of coordinate k of grid entry j.
    int level(int j, int k) const { return 2 * coordinate(points[size_t(j)], k) + 1; }

    // ggml's iq3_find_best_neighbour: the neighbour of u nearest to xval at `scale` (weights w), first of
    // ties; its levels go to L.
    int best_neighbour(int u, const float* xval, const float* w, float scale, int8_t* L) const {
        float best_d2 = FLT_MAX;
        int best = -1;
        for (uint16_t j : neighbours[u]) {
            float d2 = 0;
            for (int i = 0; i < 4; ++i) {
                const float q = float(level(j, i));
                const float diff = scale * q - xval[i];
                d2 += w[i] * diff * diff;
            }
            if (d2 < best_d2) {
                best_d2 = d2;
                best = j;
            }
        }
        assert(best >= 0);
        for (int i = 0; i < 4; ++i) L[i] = int8_t((level(best, i) - 1) / 2);
        return best;
    }
};

const Iq3Grid& iq3xxs_grid() {
    static const Iq3Grid g(iq::bitmaps::kIq3xxsPoints, 2);
    return g;
}
const Iq3Grid& iq3s_grid() {
    static const Iq3Grid g(iq::bitmaps::kIq3sPoints, 3);
    return g;
}

int lattice_point(const int8_t* L) {
    int u = 0;
    for (int i = 0; i < 4; ++i) u |= L[i] << (3 * i);
    return u;
}

// Levels of 4 magnitudes at inverse scale id, clamped to 0 .. 7.
void round_to_lattice(const float* xval, float id, int8_t* L) {
    for (int i = 0; i < 4; ++i) {
        const int l = nearest_int(0.5f * (id * xval[i] - 1));
        L[i] = int8_t(std::max(0, std::min(kMaxQ - 1, l)));
    }
}

void weighted_sums(const float* w, const float* xval, const int8_t* L, float* sumqx, float* sumq2) {
    *sumqx = *sumq2 = 0;
    for (int i = 0; i < 32; ++i) {
        const float q = float(2 * L[i] + 1);
        *sumqx += w[i] * xval[i] * q;
        *sumq2 += w[i] * q * q;
    }
}

// The scale search of one group of 32 magnitudes xval (both formats): tries inverse scales
// (15 + 0.2 is) / max for is in [-ntry, ntry], then re-rounds the groups of 4 that were not on the grid
// (all of them when `refit_all`) at the best scale. Returns the scale; L gets the levels.
float search_group(const Iq3Grid& grid, const float* xval, const float* weight, const float* waux, int ntry,
                   bool initially_on_grid, bool refit_all, int8_t* L) {
    float max = xval[0];
    for (int i = 1; i < 32; ++i) max = std::max(max, xval[i]);
    float best = 0;
    float scale = max / (2 * kMaxQ - 1);
    bool on_grid[8], on_grid_aux[8];
    int8_t Laux[32];
    for (bool& b : on_grid) b = initially_on_grid;
    for (int is = -ntry; is <= ntry; ++is) {
        const float id = (2 * kMaxQ - 1 + float(is) * 0.2f) / max;
        const float this_scale = 1 / id;
        for (int k = 0; k < 8; ++k) {
            round_to_lattice(xval + 4 * k, id, Laux + 4 * k);
            const int u = lattice_point(Laux + 4 * k);
            on_grid_aux[k] = grid.map[u] >= 0;
            if (!on_grid_aux[k]) grid.best_neighbour(u, xval + 4 * k, waux + 4 * k, this_scale, Laux + 4 * k);
        }
        float sumqx, sumq2;
        weighted_sums(weight, xval, Laux, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            std::memcpy(L, Laux, 32);
            std::memcpy(on_grid, on_grid_aux, sizeof on_grid);
        }
    }
    int n_not_on_grid = 0;
    for (bool b : on_grid) n_not_on_grid += b ? 0 : 1;
    if (n_not_on_grid > 0 && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 8; ++k) {
            if (on_grid[k] && !refit_all) continue;
            int8_t Lk[4];
            round_to_lattice(xval + 4 * k, id, Lk);
            const int u = lattice_point(Lk);
            int j = grid.map[u];
            if (j < 0) j = grid.best_neighbour(u, xval + 4 * k, waux + 4 * k, scale, L + 4 * k);
            for (int i = 0; i < 4; ++i) L[4 * k + i] = int8_t((grid.level(j, i) - 1) / 2);
        }
        float sumqx, sumq2;
        weighted_sums(weight, xval, L, &sumqx, &sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    return scale;
}

// Grid index of 4 levels that the search left on the grid.
int grid_index(const Iq3Grid& grid, const int8_t* L) {
    const int j = grid.map[lattice_point(L)];
    assert(j >= 0);
    return j;
}

void quantize_iq3_xxs_superblock(const float* xbl, BlockIQ3_XXS& y) {
    const Iq3Grid& grid = iq3xxs_grid();
    uint8_t q3[3 * QK_K / 8] = {};
    float scales[QK_K / 32];
    float max_scale = 0;
    y.d = fp32_to_fp16(0.f);
    for (int ib = 0; ib < QK_K / 32; ++ib) {
        const float* xb = xbl + 32 * ib;
        float weight[32], waux[32], xval[32];
        for (int i = 0; i < 32; ++i) weight[i] = xb[i] * xb[i];
        for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
        // Magnitudes; an odd number of negatives in 8 flips the least important value (the format stores
        // 7 sign bits and an even count).
        uint8_t block_signs[4];
        for (int k = 0; k < 4; ++k) {
            int nflip = 0;
            uint8_t s = 0;
            for (int i = 0; i < 8; ++i) {
                if (xb[8 * k + i] >= 0) {
                    xval[8 * k + i] = xb[8 * k + i];
                } else {
                    xval[8 * k + i] = -xb[8 * k + i];
                    ++nflip;
                    s |= uint8_t(1 << i);
                }
            }
            if (nflip % 2) {
                int imin = 0;
                float min = weight[8 * k] * xb[8 * k] * xb[8 * k];
                for (int i = 1; i < 8; ++i) {
                    const float ax = weight[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                    if (ax < min) {
                        min = ax;
                        imin = i;
                    }
                }
                xval[8 * k + imin] = -xval[8 * k + imin];
                s ^= uint8_t(1 << imin);
            }
            block_signs[k] = s & 127;
        }
        float max = xval[0];
        for (int i = 1; i < 32; ++i) max = std::max(max, xval[i]);
        if (max < 1e-8f) {
            scales[ib] = 0;
            continue;
        }
        int8_t L[32] = {};
        float scale = search_group(grid, xval, weight, waux, 15, true, false, L);
        if (scale < 0) {
            scale = -scale;
            for (uint8_t& s : block_signs) s = uint8_t(~s) & 127;
        }
        for (int k = 0; k < 8; ++k) q3[8 * ib + k] = uint8_t(grid_index(grid, L + 4 * k));
        const uint32_t signs = block_signs[0] | (block_signs[1] << 7) | (block_signs[2] << 14) | (block_signs[3] << 21);
        std::memcpy(q3 + QK_K / 4 + 4 * ib, &signs, 4);
        scales[ib] = scale;
        max_scale = std::max(max_scale, scale);
    }
    if (!max_scale) {
        std::memset(y.qs, 0, sizeof y.qs);
        return;
    }
    const float d = max_scale / 31;
    y.d = fp32_to_fp16(d * 1.0125f);
    const float id = 1 / d;
    for (int ib = 0; ib < QK_K / 32; ++ib) {
        int l = nearest_int(0.5f * (id * scales[ib] - 1));
        l = std::max(0, std::min(15, l));
        uint32_t word;
        std::memcpy(&word, q3 + QK_K / 4 + 4 * ib, 4);
        word |= uint32_t(l) << 28;
        std::memcpy(q3 + QK_K / 4 + 4 * ib, &word, 4);
    }
    std::memcpy(y.qs, q3, sizeof y.qs);
}

void quantize_iq3_s_superblock(const float* xbl, BlockIQ3_S& y) {
    const Iq3Grid& grid = iq3s_grid();
    std::memset(&y, 0, sizeof y);
    float scales[QK_K / 32];
    float max_scale = 0;
    // ggml advances these only past groups that are not all zero, so a zero group shifts the indices and
    // signs of the groups after it (qh and the scales stay in place): kept, since files carry it.
    uint8_t* qs = y.qs;
    uint8_t* signs = y.signs;
    for (int ib = 0; ib < QK_K / 32; ++ib) {
        const float* xb = xbl + 32 * ib;
        float weight[32], waux[32], xval[32];
        for (int i = 0; i < 32; ++i) weight[i] = xb[i] * xb[i];
        for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
        uint8_t block_signs[4];
        for (int k = 0; k < 4; ++k) {
            uint8_t s = 0;
            for (int i = 0; i < 8; ++i) {
                if (xb[8 * k + i] >= 0) {
                    xval[8 * k + i] = xb[8 * k + i];
                } else {
                    xval[8 * k + i] = -xb[8 * k + i];
                    s |= uint8_t(1 << i);
                }
            }
            block_signs[k] = s;
        }
        float max = xval[0];
        for (int i = 1; i < 32; ++i) max = std::max(max, xval[i]);
        if (!max) {
            scales[ib] = 0;
            continue;
        }
        int8_t L[32] = {};
        float scale = search_group(grid, xval, weight, waux, 9, false, true, L);
        if (scale < 0) {
            scale = -scale;
            for (uint8_t& s : block_signs) s = uint8_t(~s);
        }
        for (int k = 0; k < 8; ++k) {
            const int j = grid_index(grid, L + 4 * k);
            qs[k] = uint8_t(j & 255);
            y.qh[ib] |= uint8_t((j >> 8) << k);
        }
        qs += 8;
        std::memcpy(signs, block_signs, 4);
        signs += 4;
        scales[ib] = scale;
        max_scale = std::max(max_scale, scale);
    }
    if (!max_scale) return;
    const float d = max_scale / 31;
    y.d = fp32_to_fp16(d * 1.033f);
    const float id = 1 / d;
    for (int ib = 0; ib < QK_K / 32; ib += 2) {
        int l1 = nearest_int(0.5f * (id * scales[ib] - 1));
        l1 = std::max(0, std::min(15, l1));
        int l2 = nearest_int(0.5f * (id * scales[ib + 1] - 1));
        l2 = std::max(0, std::min(15, l2));
        y.scales[ib / 2] = uint8_t(l1 | (l2 << 4));
    }
}

}  // namespace

void quantize_row_iq3_xxs_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockIQ3_XXS*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i) quantize_iq3_xxs_superblock(x + i * QK_K, y[i]);
}

void quantize_row_iq3_s_ref(const float* x, void* vy, int64_t n) {
    assert(n % QK_K == 0);
    auto* y = static_cast<BlockIQ3_S*>(vy);
    for (int64_t i = 0; i < n / QK_K; ++i) quantize_iq3_s_superblock(x + i * QK_K, y[i]);
}

}  // namespace ggml
