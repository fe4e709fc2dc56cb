// The row kernels of softmax, attention and SiLU (attn_kernels.h) equal their scalar forms bit for bit at
// every level: exp against std::exp over a spread of arguments, ragged lengths around the vector widths,
// masked (-inf) cells, zero weights and values that would poison a sum if a zero weight were not skipped.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ggml/quants.h"
#include "ggml/src/cpu/attn_kernels.h"
#include "kernels_test_util.h"

using namespace kernels_test;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

uint64_t bits_of(double d) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
}

int mismatches(const std::vector<float>& a, const std::vector<float>& b) {
    int n = 0;
    for (size_t i = 0; i < a.size(); ++i) n += bits_of(a[i]) != bits_of(b[i]);
    return n;
}

// Scores as attention makes them: mostly moderate values, some far below the maximum (exp underflows or
// takes the library's edge cases), masked cells.
std::vector<float> scores(int64_t n, uint32_t seed, bool masked) {
    std::vector<float> x = normal_floats((size_t)n, seed, 8.0f);
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < n; ++i) {
        const uint32_t r = rng() % 16;
        if (r == 0) x[(size_t)i] -= 95.0f;  // |x - m| >= 88: the library's own path
        if (r == 1) x[(size_t)i] = -0.0f;
        if (masked && r >= 12) x[(size_t)i] = kNegInf;
    }
    return x;
}

}  // namespace

TEST_CASE("exp_row equals std::exp and its sum in order at every level", "[kernels][rows]") {
    uint32_t seed = 4000;
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 63, 64, 100, 513})
            for (bool masked : {false, true}) {
                const std::vector<float> x = scores(n, seed += 3, masked);
                float m = kNegInf;
                for (float v : x) m = v > m ? v : m;
                std::vector<float> want((size_t)n), got((size_t)n);
                double want_sum = 0.0;
                for (int64_t i = 0; i < n; ++i) {
                    want[(size_t)i] = x[(size_t)i] == kNegInf ? 0.0f : std::exp(x[(size_t)i] - m);
                    want_sum += want[(size_t)i];
                }
                const double sum = ggml::cpu::exp_row(x.data(), m, got.data(), n);
                INFO(ggml::cpu::isa_level_name(level) << ", n = " << n << (masked ? ", masked" : ""));
                CHECK(mismatches(want, got) == 0);
                CHECK(bits_of(sum) == bits_of(want_sum));
                // In place, as soft_max calls it.
                std::vector<float> inplace = x;
                const double sum2 = ggml::cpu::exp_row(inplace.data(), m, inplace.data(), n);
                CHECK(mismatches(want, inplace) == 0);
                CHECK(bits_of(sum2) == bits_of(want_sum));
            }
        // Fully masked rows (the maximum is -inf too) give zeros.
        std::vector<float> x(37, kNegInf), y(37, 1.0f);
        CHECK(ggml::cpu::exp_row(x.data(), kNegInf, y.data(), 37) == 0.0);
        for (float v : y) CHECK(bits_of(v) == 0u);
    }
}

TEST_CASE("exp_row equals std::exp over the whole float range", "[kernels][rows]") {
    // Every 997th bit pattern of both signs (m = 0, so y = exp(x)): the main range, the edges near +-88
    // and -104, subnormal results, infinities and nans.
    std::vector<float> x;
    for (uint64_t u = 0; u <= 0xffffffffu; u += 997) x.push_back(float_of((uint32_t)u));
    std::vector<float> want(x.size()), got(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] == kNegInf ? 0.0f : std::exp(x[i] - 0.0f);
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        // In pieces, so that an infinite or nan sum of one piece does not hide the others' sums.
        int bad = 0;
        for (size_t i = 0; i < x.size(); i += 4096) {
            const int64_t n = (int64_t)std::min<size_t>(4096, x.size() - i);
            ggml::cpu::exp_row(x.data() + i, 0.0f, got.data() + i, n);
        }
        for (size_t i = 0; i < x.size(); ++i) {
            const bool same =
                bits_of(want[i]) == bits_of(got[i]) || (std::isnan(want[i]) && std::isnan(got[i]));
            if (!same && bad++ < 5) INFO("x = " << x[i] << ": " << want[i] << " vs " << got[i]);
        }
        INFO(ggml::cpu::isa_level_name(level));
        CHECK(bad == 0);
    }
}

TEST_CASE("scale_mask_max_row equals its scalar form at every level", "[kernels][rows]") {
    uint32_t seed = 5000;
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t n : {1, 5, 15, 16, 17, 31, 32, 33, 200})
            for (bool with_mask : {false, true}) {
                const std::vector<float> x = normal_floats((size_t)n, seed += 2, 3.0f);
                std::vector<float> mask = scores(n, seed + 1, true);
                for (float& v : mask) v = v == kNegInf ? kNegInf : 0.0f;
                const float* mk = with_mask ? mask.data() : nullptr;
                const float scale = 0.125f;
                std::vector<float> want((size_t)n), got((size_t)n);
                float want_mx = kNegInf;
                for (int64_t i = 0; i < n; ++i) {
                    want[(size_t)i] = x[(size_t)i] * scale + (mk ? mk[i] : 0.0f);
                    want_mx = want[(size_t)i] > want_mx ? want[(size_t)i] : want_mx;
                }
                const float mx = ggml::cpu::scale_mask_max_row(x.data(), scale, mk, got.data(), n);
                INFO(ggml::cpu::isa_level_name(level) << ", n = " << n << (with_mask ? ", mask" : ""));
                CHECK(mismatches(want, got) == 0);
                CHECK(mx == want_mx);
            }
    }
}

TEST_CASE("weighted_sum_f64 equals the ordered double sum at every level", "[kernels][rows]") {
    uint32_t seed = 6000;
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t d : {1, 3, 8, 13, 64, 80, 128, 131, 260})
            for (int64_t n : {1, 2, 17, 100}) {
                const size_t stride = (size_t)d + 5;  // rows of a wider tensor
                std::vector<float> v = normal_floats(stride * (size_t)n, seed += 2, 2.0f);
                std::vector<float> w = normal_floats((size_t)n, seed + 1, 0.1f);
                std::mt19937 rng(seed);
                for (int64_t i = 0; i < n; ++i)
                    if (rng() % 3 == 0) {
                        w[(size_t)i] = 0.0f;  // a masked cell: its values are never read
                        v[(size_t)i * stride] = std::numeric_limits<float>::quiet_NaN();
                    }
                std::vector<double> acc((size_t)d, 0.0);
                for (int64_t i = 0; i < n; ++i)
                    if (w[(size_t)i] != 0.0f)
                        for (int64_t j = 0; j < d; ++j)
                            acc[(size_t)j] +=
                                (double)w[(size_t)i] * (double)v[(size_t)i * stride + (size_t)j];
                std::vector<float> want((size_t)d + 1, -7.0f), got((size_t)d + 1, -7.0f);
                for (int64_t j = 0; j < d; ++j) want[(size_t)j] = (float)acc[(size_t)j];
                std::vector<double> scratch((size_t)d);
                ggml::cpu::weighted_sum_f64(n, w.data(), v.data(), stride, d, scratch.data(), got.data());
                INFO(ggml::cpu::isa_level_name(level) << ", d = " << d << ", n = " << n);
                CHECK(mismatches(want, got) == 0);  // the last element checks that nothing past d is written
            }
    }
}

TEST_CASE("weighted_sum_f64_add over several queries, chained over pieces, equals weighted_sum_f64 per query",
          "[kernels][rows]") {
    uint32_t seed = 6200;
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t d : {1, 8, 13, 40, 64, 80, 128, 131, 260})
            for (int64_t n : {1, 17, 100})
                for (int nq : {1, 2, 3, 4, 5, 7, 16}) {
                    const size_t stride = (size_t)d + 3;
                    std::vector<float> v = normal_floats(stride * (size_t)n, seed += 2, 2.0f);
                    std::vector<float> w = normal_floats((size_t)n * (size_t)nq, seed + 1, 0.1f);
                    std::mt19937 rng(seed);
                    for (int64_t i = 0; i < n; ++i) {
                        const bool row_masked = rng() % 4 == 0;  // no query sees it: its values may be NaN
                        bool some_zero = false;
                        for (int q = 0; q < nq; ++q)
                            if (row_masked || rng() % 3 == 0) {
                                w[(size_t)q * (size_t)n + (size_t)i] = 0.0f;
                                some_zero = true;
                            }
                        if (row_masked) v[(size_t)i * stride] = std::numeric_limits<float>::quiet_NaN();
                        // Seen by some queries only (another sequence's cell): an infinite value reaches
                        // their sums and must leave the others' alone.
                        else if (some_zero && rng() % 4 == 0)
                            v[(size_t)i * stride + (size_t)(d - 1)] = std::numeric_limits<float>::infinity();
                    }
                    // The values in double (packed rows of d), as mul_mat_t converts them.
                    std::vector<double> vd((size_t)n * (size_t)d);
                    for (int64_t i = 0; i < n; ++i)
                        ggml::cpu::to_f64_row(v.data() + (size_t)i * stride,
                                              vd.data() + (size_t)i * (size_t)d, d);
                    // The weights in double, and per row the queries whose weight is not zero.
                    std::vector<double> wd(w.begin(), w.end());
                    std::vector<uint16_t> seen((size_t)n, 0);
                    for (int q = 0; q < nq; ++q)
                        for (int64_t i = 0; i < n; ++i)
                            if (w[(size_t)q * (size_t)n + (size_t)i] != 0.0f) seen[(size_t)i] |= uint16_t(1u << q);
                    // weights_to_f64, as mul_mat_t prepares them, gives the same.
                    std::vector<double> wd2(wd.size(), -1.0);
                    std::vector<uint16_t> seen2((size_t)n, 0);
                    for (int q = 0; q < nq; ++q)
                        ggml::cpu::weights_to_f64(w.data() + (size_t)q * (size_t)n, n, q,
                                                  wd2.data() + (size_t)q * (size_t)n, seen2.data());
                    CHECK(wd2 == wd);
                    CHECK(seen2 == seen);
                    std::vector<double> acc((size_t)nq * (size_t)d, 0.0);
                    // Two pieces of rows, the sums carried from the first to the second.
                    const int64_t cut = n / 3;
                    ggml::cpu::weighted_sum_f64_add(cut, wd.data(), (size_t)n, seen.data(), nq, vd.data(), d,
                                                    acc.data(), (size_t)d);
                    ggml::cpu::weighted_sum_f64_add(n - cut, wd.data() + cut, (size_t)n, seen.data() + cut, nq,
                                                    vd.data() + (size_t)cut * (size_t)d, d, acc.data(), (size_t)d);
                    INFO(ggml::cpu::isa_level_name(level)
                         << ", d = " << d << ", n = " << n << ", queries " << nq);
                    for (int q = 0; q < nq; ++q) {
                        std::vector<float> want((size_t)d), got((size_t)d);
                        std::vector<double> scratch((size_t)d);
                        ggml::cpu::weighted_sum_f64(n, w.data() + (size_t)q * (size_t)n, v.data(), stride, d,
                                                    scratch.data(), want.data());
                        for (int64_t j = 0; j < d; ++j)
                            got[(size_t)j] = (float)acc[(size_t)q * (size_t)d + (size_t)j];
                        CHECK(mismatches(want, got) == 0);
                    }
                }
    }
}

TEST_CASE("to_f64_row converts f32 and f16 rows exactly at every level", "[kernels][rows]") {
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t n : {1, 7, 8, 9, 64, 131}) {
            const std::vector<float> x = normal_floats((size_t)n, 6300 + (uint32_t)n, 3.0f);
            std::vector<uint16_t> h((size_t)n);
            for (int64_t i = 0; i < n; ++i) h[(size_t)i] = ggml::fp32_to_fp16(x[(size_t)i]);
            std::vector<double> from_f32((size_t)n + 1, -7.0), from_f16((size_t)n + 1, -7.0);
            ggml::cpu::to_f64_row(x.data(), from_f32.data(), n);
            ggml::cpu::to_f64_row(h.data(), from_f16.data(), n);
            INFO(ggml::cpu::isa_level_name(level) << ", n = " << n);
            for (int64_t i = 0; i < n; ++i) {
                CHECK(bits_of(from_f32[(size_t)i]) == bits_of((double)x[(size_t)i]));
                CHECK(bits_of(from_f16[(size_t)i]) == bits_of((double)ggml::fp16_to_fp32(h[(size_t)i])));
            }
            CHECK(from_f32[(size_t)n] == -7.0);  // nothing past n is written
            CHECK(from_f16[(size_t)n] == -7.0);
        }
    }
}

TEST_CASE("value_row_to_f64 gives a row's values of any cache type as doubles", "[kernels][rows]") {
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (Type t : {Type::F32, Type::F16, Type::Q8_0, Type::Q4_0}) {
            const int64_t n = 96;  // three 32-value blocks
            const size_t bytes = ggml::row_size(t, n);
            const std::vector<uint8_t> row = quantized_rows(t, n, 1, bytes, 6350);
            std::vector<float> want((size_t)n), tmp((size_t)n);
            ggml::type_traits(t).to_float(row.data(), want.data(), n);
            std::vector<double> got((size_t)n + 1, -7.0);
            ggml::cpu::value_row_to_f64(t, row.data(), got.data(), n, tmp.data());
            INFO(ggml::cpu::isa_level_name(level) << ", " << ggml::type_name(t));
            for (int64_t i = 0; i < n; ++i) CHECK(bits_of(got[(size_t)i]) == bits_of((double)want[(size_t)i]));
            CHECK(got[(size_t)n] == -7.0);
        }
    }
}

TEST_CASE("exp_row_values and sum_rows_f64 give exp_row's values and sums, several rows at once",
          "[kernels][rows]") {
    uint32_t seed = 6400;
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t n : {1, 7, 8, 45, 200})
            for (int nr : {1, 2, 5, 8}) {
                const size_t stride = (size_t)n + 3;
                std::vector<float> x(stride * (size_t)nr, 0.0f), y_want(x.size(), 0.0f),
                    y_got(x.size(), 0.0f);
                std::vector<double> want((size_t)nr),
                    got((size_t)nr, 0.25);  // sums are added to what is there
                for (int r = 0; r < nr; ++r) {
                    const std::vector<float> row = scores(n, seed += 3, true);
                    std::copy(row.begin(), row.end(), x.begin() + (std::ptrdiff_t)((size_t)r * stride));
                    float m = kNegInf;
                    for (float v : row) m = v > m ? v : m;
                    const float* xr = x.data() + (size_t)r * stride;
                    want[(size_t)r] = ggml::cpu::exp_row(xr, m, y_want.data() + (size_t)r * stride, n, 0.25);
                    ggml::cpu::exp_row_values(xr, m, y_got.data() + (size_t)r * stride, n);
                }
                ggml::cpu::sum_rows_f64(y_got.data(), stride, nr, n, got.data());
                INFO(ggml::cpu::isa_level_name(level) << ", n = " << n << ", rows " << nr);
                CHECK(mismatches(y_want, y_got) == 0);
                for (int r = 0; r < nr; ++r) CHECK(bits_of(got[(size_t)r]) == bits_of(want[(size_t)r]));
            }
    }
}

TEST_CASE("exp_row chained over a row's blocks gives the whole row's sum", "[kernels][rows][kv_blocks]") {
    uint32_t seed = 6500;
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t n : {32, 45, 96, 200}) {
            const std::vector<float> x = scores(n, seed += 3, true);
            float m = kNegInf;
            for (float v : x) m = v > m ? v : m;
            std::vector<float> whole((size_t)n), pieces((size_t)n);
            const double want = ggml::cpu::exp_row(x.data(), m, whole.data(), n);
            double got = 0.0;
            for (int64_t i0 = 0; i0 < n; i0 += 32)  // blocks of 32, the last one ragged
                got = ggml::cpu::exp_row(x.data() + i0, m, pieces.data() + i0, std::min<int64_t>(32, n - i0), got);
            INFO(ggml::cpu::isa_level_name(level) << ", n = " << n);
            CHECK(bits_of(got) == bits_of(want));
            CHECK(mismatches(whole, pieces) == 0);
        }
    }
}

TEST_CASE("weighted_sum_f64 over listed blocks reads only them and equals the full sum with zeros elsewhere",
          "[kernels][rows][kv_blocks]") {
    uint32_t seed = 6600;
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t d : {1, 8, 13, 64, 131})
            for (int64_t n : {32, 70, 160}) {
                const size_t stride = (size_t)d + 3;
                std::vector<float> v = normal_floats(stride * (size_t)n, seed += 2, 2.0f);
                std::vector<float> w = normal_floats((size_t)n, seed + 1, 0.1f);
                // Blocks 0 and the last one listed; the rows of the others hold poison the sum must not see.
                const int32_t last = (int32_t)((n - 1) / 32);
                std::vector<int32_t> index = {0};
                if (last > 0) index.push_back(last);
                std::vector<float> w_zeroed = w;
                for (int64_t i = 32; i < (int64_t)last * 32; ++i) {
                    w[(size_t)i] = std::numeric_limits<float>::quiet_NaN();
                    v[(size_t)i * stride] = std::numeric_limits<float>::quiet_NaN();
                    w_zeroed[(size_t)i] = 0.0f;
                }
                std::vector<double> scratch((size_t)d);
                std::vector<float> want((size_t)d), got((size_t)d);
                ggml::cpu::weighted_sum_f64(n, w_zeroed.data(), v.data(), stride, d, scratch.data(), want.data());
                const ggml::cpu::RowBlocks blocks{index.data(), (int64_t)index.size(), 32};
                ggml::cpu::weighted_sum_f64(n, w.data(), v.data(), stride, d, scratch.data(), got.data(), &blocks);
                INFO(ggml::cpu::isa_level_name(level) << ", d = " << d << ", n = " << n);
                CHECK(mismatches(want, got) == 0);
            }
    }
}

TEST_CASE("weighted_sum_f64 of f16 values equals the ordered double sum of their exact values at every level",
          "[kernels][rows][kv_blocks]") {
    uint32_t seed = 6700;
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t d : {1, 5, 8, 13, 64, 128, 131})
            for (int64_t n : {1, 17, 64, 100}) {
                const size_t stride = (size_t)d * 3;  // one head's rows in a wider cache row
                const std::vector<float> vf = normal_floats(stride * (size_t)n, seed += 2, 2.0f);
                std::vector<uint16_t> v(vf.size());
                for (size_t i = 0; i < v.size(); ++i) v[i] = ggml::fp32_to_fp16(vf[i]);
                std::vector<float> w = normal_floats((size_t)n, seed + 1, 0.1f);
                for (int64_t i = 0; i < n; i += 3) {
                    w[(size_t)i] = 0.0f;  // masked: its values are never read
                    v[(size_t)i * stride] = 0x7e00;  // f16 NaN
                }
                std::vector<double> acc((size_t)d, 0.0);
                for (int64_t i = 0; i < n; ++i)
                    if (w[(size_t)i] != 0.0f)
                        for (int64_t j = 0; j < d; ++j)
                            acc[(size_t)j] += (double)w[(size_t)i] *
                                              (double)ggml::fp16_to_fp32(v[(size_t)i * stride + (size_t)j]);
                std::vector<float> want((size_t)d + 1, -7.0f), got((size_t)d + 1, -7.0f);
                for (int64_t j = 0; j < d; ++j) want[(size_t)j] = (float)acc[(size_t)j];
                std::vector<double> scratch((size_t)d);
                ggml::cpu::weighted_sum_f64(n, w.data(), v.data(), stride, d, scratch.data(), got.data());
                INFO(ggml::cpu::isa_level_name(level) << ", d = " << d << ", n = " << n);
                CHECK(mismatches(want, got) == 0);
            }
    }
}

TEST_CASE("silu_row and swiglu_row equal x / (1 + std::exp(-x)) at every level", "[kernels][rows]") {
    uint32_t seed = 7000;
    for (IsaLevel level : levels()) {
        LevelScope scope(level);
        for (int64_t n : {1, 7, 8, 9, 31, 64, 333}) {
            std::vector<float> x = normal_floats((size_t)n, seed += 2, 6.0f);
            const std::vector<float> g = normal_floats((size_t)n, seed + 1, 1.0f);
            for (size_t i = 0; i < x.size(); i += 5) x[i] *= 20.0f;  // beyond +-88 for some
            std::vector<float> want_s((size_t)n), want_g((size_t)n), got_s((size_t)n), got_g((size_t)n);
            for (size_t i = 0; i < x.size(); ++i) {
                want_s[i] = x[i] / (1.0f + std::exp(-x[i]));
                want_g[i] = want_s[i] * g[i];
            }
            ggml::cpu::silu_row(x.data(), got_s.data(), n);
            ggml::cpu::swiglu_row(x.data(), g.data(), got_g.data(), n);
            INFO(ggml::cpu::isa_level_name(level) << ", n = " << n);
            CHECK(mismatches(want_s, got_s) == 0);
            CHECK(mismatches(want_g, got_g) == 0);
            // In place (the output over either input).
            std::vector<float> a = x, b = x, c = g;
            ggml::cpu::silu_row(a.data(), a.data(), n);
            ggml::cpu::swiglu_row(b.data(), g.data(), b.data(), n);
            ggml::cpu::swiglu_row(x.data(), c.data(), c.data(), n);
            CHECK(mismatches(want_s, a) == 0);
            CHECK(mismatches(want_g, b) == 0);
            CHECK(mismatches(want_g, c) == 0);
        }
    }
}
