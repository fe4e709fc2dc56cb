// Attention with visible-block lists (ggml::with_kv_blocks) gives the same bits as attention over every
// cell of the cache, and never reads a block that no query lists: there the K and V rows hold NaNs.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ggml/backend.h"
#include "ggml/ggml.h"
#include "ops_test_util.h"

using namespace ggml;
using namespace ops_test;

namespace {

struct Layout {
    std::vector<int> owner;      // per cell: its sequence, -1 for a free cell
    std::vector<int> query_seq;  // per query
    std::vector<int> query_pos;  // per query: sees its sequence's cells j <= query_pos
    std::vector<float> mask;     // [n_kv, n_q]
    std::vector<int32_t> blocks;  // [1 + n_blocks, n_q]
    int64_t row_len = 0;
};

// Cells mostly grouped by sequence in blocks of kKvBlock (as the engine places them), some blocks mixed,
// some free; sequence n_seq owns blocks that no query belongs to (they, and the free ones, stay pure).
Layout make_layout(int64_t n_kv, int64_t n_q, int n_seq, uint32_t seed) {
    std::mt19937 rng(seed);
    Layout l;
    const int64_t nb = (n_kv + kKvBlock - 1) / kKvBlock;
    l.owner.resize((size_t)n_kv);
    for (int64_t j = 0; j < n_kv; ++j) {
        const int64_t b = j / kKvBlock;
        const int dominant = (int)(b % (n_seq + 2)) - 1;  // -1: a free block; n_seq: nobody's queries
        const bool mixed = dominant >= 0 && dominant < n_seq && rng() % 5 == 0;  // free, nobody's: pure
        l.owner[(size_t)j] = mixed ? (int)(rng() % (n_seq + 1)) : dominant;
    }
    const float ninf = -std::numeric_limits<float>::infinity();
    l.row_len = 1 + nb;
    l.mask.assign((size_t)(n_kv * n_q), ninf);
    l.blocks.assign((size_t)(l.row_len * n_q), -1);
    for (int64_t t = 0; t < n_q; ++t) {
        const int s = (int)(t % n_seq);
        const int pos = (int)(n_kv / 2 + rng() % (n_kv / 2 + 1));
        l.query_seq.push_back(s);
        l.query_pos.push_back(pos);
        int32_t* row = &l.blocks[(size_t)(t * l.row_len)];
        int32_t c = 0;
        for (int64_t b = 0; b < nb; ++b) {
            bool mine = false;
            for (int64_t j = b * kKvBlock; j < std::min(n_kv, (b + 1) * kKvBlock); ++j)
                if (l.owner[(size_t)j] == s) {
                    mine = true;
                    if (j <= pos) l.mask[(size_t)(t * n_kv + j)] = 0.0f;
                }
            if (mine) row[1 + c++] = (int32_t)b;
        }
        row[0] = c;
    }
    return l;
}

// Rows of blocks that no query lists.
std::vector<bool> unlisted_rows(const Layout& l, int64_t n_kv, int64_t n_q) {
    std::vector<bool> out((size_t)n_kv, true);
    for (int64_t t = 0; t < n_q; ++t) {
        const int32_t* row = &l.blocks[(size_t)(t * l.row_len)];
        for (int32_t i = 0; i < row[0]; ++i)
            for (int64_t j = row[1 + i] * kKvBlock; j < std::min(n_kv, (row[1 + i] + 1) * kKvBlock); ++j)
                out[(size_t)j] = false;
    }
    return out;
}

struct Shape {
    int64_t D, n_q, H, Hkv, n_kv;
    int n_seq;
};

std::vector<float> attend(const Shape& s, Type kv_type, bool flash, bool with_blocks, const Layout& l,
                          std::vector<float> q, std::vector<float> k, std::vector<float> v, int nth) {
    Runner r;
    Context ctx;
    auto mask = l.mask;
    auto blocks = l.blocks;
    Tensor* tq = input(ctx, q, {s.D, s.n_q, s.H});
    Tensor* k32 = input(ctx, k, {s.D, s.n_kv, s.Hkv});
    Tensor* v32 = input(ctx, v, {s.D, s.n_kv, s.Hkv});
    Tensor* tk = kv_type == Type::F32 ? k32 : dup(ctx, k32, kv_type);
    Tensor* tv = kv_type == Type::F32 ? v32 : dup(ctx, v32, kv_type);
    Tensor* tm = input(ctx, mask, {s.n_kv, s.n_q});
    Tensor* tb = ctx.new_tensor_2d(Type::I32, l.row_len, s.n_q);
    tb->data = blocks.data();
    auto hint = [&](Tensor* op) { return with_blocks ? with_kv_blocks(op, tb) : op; };
    const float sc = 1.0f / std::sqrt((float)s.D);
    Tensor* out;
    if (flash) {
        out = hint(flash_attn(ctx, tq, tk, tv, tm, sc));
    } else {
        Tensor* kq = hint(soft_max(ctx, hint(mul_mat(ctx, tk, tq)), tm, sc));
        out = cont(ctx, permute(ctx, hint(mul_mat_t(ctx, tv, kq)), 0, 2, 1, 3));
    }
    r.run(out, nth);
    return read(out);
}

}  // namespace

TEST_CASE("attention over visible blocks equals attention over every cell, bit for bit",
          "[ggml][attention][kv_blocks]") {
    const Shape shapes[] = {
        {8, 1, 8, 8, 256, 4},    // decode of one stream among cached prompts (stories260K's heads)
        {8, 4, 8, 8, 200, 4},    // four streams, a ragged last block
        {32, 16, 4, 2, 96, 3},   // grouped-query heads
        {64, 37, 2, 1, 333, 5},  // a prefill chunk, more queries than a tile's columns
        {16, 70, 2, 2, 64, 1},   // one sequence: runs of 64 columns
    };
    uint32_t seed = 900;
    for (const Shape& s : shapes)
        for (Type kv_type : {Type::F16, Type::F32})
            for (bool flash : {false, true}) {
                const Layout l = make_layout(s.n_kv, s.n_q, s.n_seq, seed += 7);
                const auto q = randn((size_t)(s.D * s.n_q * s.H), seed + 1);
                const auto k = randn((size_t)(s.D * s.n_kv * s.Hkv), seed + 2);
                const auto v = randn((size_t)(s.D * s.n_kv * s.Hkv), seed + 3);
                const auto want = attend(s, kv_type, flash, false, l, q, k, v, 2);
                // The same cache with NaN in every row no query lists: reading one would show.
                auto k_poisoned = k, v_poisoned = v;
                const std::vector<bool> unlisted = unlisted_rows(l, s.n_kv, s.n_q);
                int n_poisoned = 0;
                for (int64_t h = 0; h < s.Hkv; ++h)
                    for (int64_t j = 0; j < s.n_kv; ++j)
                        if (unlisted[(size_t)j]) {
                            n_poisoned += h == 0;
                            for (int64_t d = 0; d < s.D; ++d) {
                                k_poisoned[(size_t)((h * s.n_kv + j) * s.D + d)] = std::nanf("");
                                v_poisoned[(size_t)((h * s.n_kv + j) * s.D + d)] = std::nanf("");
                            }
                        }
                INFO("D " << s.D << " n_q " << s.n_q << " H " << s.H << "/" << s.Hkv << " n_kv " << s.n_kv
                          << " type " << type_name(kv_type) << (flash ? " flash" : " unfused") << ", "
                          << n_poisoned << " poisoned rows");
                if (s.n_seq > 1) CHECK(n_poisoned > 0);  // the test checks something
                for (int nth : {1, 3}) {
                    const auto got = attend(s, kv_type, flash, true, l, q, k_poisoned, v_poisoned, nth);
                    REQUIRE(got.size() == want.size());
                    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
                }
            }
}

TEST_CASE("flash attention equals the unfused path bit for bit, with and without visible blocks",
          "[ggml][attention][kv_blocks]") {
    // Prefill chunks (several queries of a head at once), ragged last chunks, GQA, mixed sequences.
    const Shape shapes[] = {
        {8, 4, 8, 8, 200, 4},
        {32, 16, 4, 2, 96, 3},
        {64, 37, 2, 1, 333, 5},
        {64, 40, 4, 1, 100, 1},
        {16, 70, 2, 2, 64, 1},
    };
    uint32_t seed = 1900;
    for (const Shape& s : shapes)
        for (Type kv_type : {Type::F16, Type::F32}) {  // (the unfused path has no quantized V)
            const Layout l = make_layout(s.n_kv, s.n_q, s.n_seq, seed += 7);
            const auto q = randn((size_t)(s.D * s.n_q * s.H), seed + 1);
            const auto k = randn((size_t)(s.D * s.n_kv * s.Hkv), seed + 2);
            const auto v = randn((size_t)(s.D * s.n_kv * s.Hkv), seed + 3);
            for (bool with_blocks : {false, true})
                for (int nth : {1, 3}) {
                    INFO("D " << s.D << " n_q " << s.n_q << " H " << s.H << "/" << s.Hkv << " n_kv " << s.n_kv
                              << " type " << type_name(kv_type) << (with_blocks ? " blocks" : "") << ", threads "
                              << nth);
                    const auto unfused = attend(s, kv_type, false, with_blocks, l, q, k, v, nth);
                    const auto flash = attend(s, kv_type, true, with_blocks, l, q, k, v, nth);
                    REQUIRE(unfused.size() == flash.size());
                    CHECK(std::memcmp(unfused.data(), flash.data(), flash.size() * sizeof(float)) == 0);
                }
        }
}

TEST_CASE("with_kv_blocks refuses ops that are not attention and lists that do not cover the cache",
          "[ggml][attention][kv_blocks]") {
    Context ctx(1 << 20, false);
    Tensor* k = ctx.new_tensor_3d(Type::F32, 8, 64, 2);
    Tensor* q = ctx.new_tensor_3d(Type::F32, 8, 3, 2);
    Tensor* good = ctx.new_tensor_2d(Type::I32, 1 + 2, 3);
    Tensor* short_rows = ctx.new_tensor_2d(Type::I32, 2, 3);
    Tensor* few_queries = ctx.new_tensor_2d(Type::I32, 3, 2);
    Tensor* f32 = ctx.new_tensor_2d(Type::F32, 3, 3);
    CHECK_THROWS_AS(with_kv_blocks(add(ctx, q, q), good), Error);
    CHECK_THROWS_AS(with_kv_blocks(mul_mat(ctx, k, q), short_rows), Error);
    CHECK_THROWS_AS(with_kv_blocks(mul_mat(ctx, k, q), few_queries), Error);
    CHECK_THROWS_AS(with_kv_blocks(mul_mat(ctx, k, q), f32), Error);
    Tensor* kq = with_kv_blocks(mul_mat(ctx, k, q), good);
    CHECK(kq->src[kKvBlocksSrc] == good);
    CHECK_THROWS_AS(with_kv_blocks(kq, good), Error);
}
