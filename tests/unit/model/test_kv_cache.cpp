// KV cache sequence operations on the cell metadata (no model): seq_rm, seq_cp, seq_keep, seq_add
// with its pending shifts and copy-on-write of shared cells.
#include <catch2/catch.hpp>
#include <cstring>

#include "engine/model/kv_cache.h"
#include "engine/model/kv_shift.h"

using namespace engine;

namespace {

HParams tiny_hparams() {
    HParams hp;
    hp.n_layer = 2;
    hp.n_head = 2;
    hp.n_head_kv = 1;
    hp.n_embd_head_k = hp.n_embd_head_v = 32;
    hp.n_embd = 64;
    hp.n_rot = 32;
    return hp;
}

// Places tokens of seq at positions [p0, p1), one cell each; returns the cells.
std::vector<int32_t> fill(KvCache& kv, SeqId seq, Pos p0, Pos p1) {
    std::vector<int32_t> cells;
    REQUIRE(kv.find_free((uint32_t)(p1 - p0), cells));
    for (Pos p = p0; p < p1; ++p) kv.occupy(cells[(size_t)(p - p0)], p, {seq});
    return cells;
}

std::vector<Pos> positions(const KvCache& kv, SeqId seq) {
    std::vector<Pos> out;
    for (int32_t c : kv.seq_cells(seq)) out.push_back(kv.cell(c).pos);
    return out;
}

struct Fixture {
    std::unique_ptr<ggml::CpuBackend> backend = ggml::make_cpu_backend(1);
    KvCache kv{tiny_hparams(), 16, ggml::Type::F16, ggml::Type::F16, *backend};
};

}  // namespace

TEST_CASE("seq_rm removes a position range of one sequence or of all", "[model][kv]") {
    Fixture f;
    fill(f.kv, 0, 0, 6);
    fill(f.kv, 1, 0, 4);
    f.kv.seq_rm(0, 2, 4);
    REQUIRE(positions(f.kv, 0) == std::vector<Pos>{0, 1, 4, 5});
    REQUIRE(f.kv.n_used() == 8);
    f.kv.seq_rm(0, 4, -1);  // p1 < 0: to the end
    REQUIRE(positions(f.kv, 0) == std::vector<Pos>{0, 1});
    f.kv.seq_rm(-1, 1, -1);  // every sequence
    REQUIRE(positions(f.kv, 0) == std::vector<Pos>{0});
    REQUIRE(positions(f.kv, 1) == std::vector<Pos>{0});
    REQUIRE(f.kv.n_used() == 2);
    REQUIRE(f.kv.seq_pos_max(0) == 0);
    REQUIRE(f.kv.seq_pos_min(1) == 0);
}

TEST_CASE("seq_cp shares cells without using new ones, seq_keep drops the others", "[model][kv]") {
    Fixture f;
    fill(f.kv, 0, 0, 5);
    f.kv.seq_cp(0, 1, 0, 3);
    REQUIRE(positions(f.kv, 1) == std::vector<Pos>{0, 1, 2});
    REQUIRE(f.kv.n_used() == 5);  // stored once
    f.kv.seq_rm(0, 0, -1);        // the copy survives its source
    REQUIRE(positions(f.kv, 1) == std::vector<Pos>{0, 1, 2});
    REQUIRE(f.kv.n_used() == 3);
    fill(f.kv, 2, 0, 2);
    f.kv.seq_cp(1, 3, 0, -1);
    f.kv.seq_keep(3);
    REQUIRE(positions(f.kv, 1).empty());
    REQUIRE(positions(f.kv, 2).empty());
    REQUIRE(positions(f.kv, 3) == std::vector<Pos>{0, 1, 2});
    REQUIRE(f.kv.n_used() == 3);
}

TEST_CASE("seq_add moves positions and records the pending key rotation", "[model][kv]") {
    Fixture f;
    fill(f.kv, 0, 0, 8);
    f.kv.seq_rm(0, 2, 5);
    f.kv.seq_add(0, 5, -1, -3);
    REQUIRE(positions(f.kv, 0) == std::vector<Pos>{0, 1, 2, 3, 4});
    REQUIRE(f.kv.has_shift());
    std::vector<int32_t> cells, deltas;
    f.kv.pending_shifts(cells, deltas);
    REQUIRE(cells.size() == 3);
    for (int32_t d : deltas) REQUIRE(d == -3);
    // Shifts accumulate until applied.
    f.kv.seq_add(0, 2, -1, 1);
    REQUIRE(positions(f.kv, 0) == std::vector<Pos>{0, 1, 3, 4, 5});
    f.kv.pending_shifts(cells, deltas);
    for (int32_t d : deltas) REQUIRE(d == -2);
    f.kv.clear_shifts();
    REQUIRE_FALSE(f.kv.has_shift());
    f.kv.pending_shifts(cells, deltas);
    REQUIRE(cells.empty());
    // Moved below position 0: the cells leave the sequence.
    f.kv.seq_add(0, 0, 2, -5);
    REQUIRE(positions(f.kv, 0) == std::vector<Pos>{3, 4, 5});
    REQUIRE(f.kv.n_used() == 3);
    f.kv.seq_add(0, 0, -1, 0);  // no-op
    REQUIRE(positions(f.kv, 0) == std::vector<Pos>{3, 4, 5});
}

TEST_CASE("seq_add on a shared cell moves a private copy and leaves the other sequence in place",
          "[model][kv]") {
    Fixture f;
    const auto cells = fill(f.kv, 0, 0, 4);
    // Distinct bytes in every row so that the copy can be checked.
    for (int il = 0; il < f.kv.n_layer(); ++il)
        for (ggml::Tensor* t : {f.kv.k(il), f.kv.v(il)})
            for (int32_t c : cells) {
                std::vector<char> row(t->nb[1], (char)(c * 7 + il * 3 + (t == f.kv.v(il))));
                ggml::tensor_set(t, row.data(), (size_t)c * t->nb[1], row.size());
            }
    f.kv.seq_cp(0, 1, 0, -1);
    f.kv.seq_add(1, 2, -1, 10);
    REQUIRE(positions(f.kv, 0) == std::vector<Pos>{0, 1, 2, 3});
    REQUIRE(positions(f.kv, 1) == std::vector<Pos>{0, 1, 12, 13});
    REQUIRE(f.kv.n_used() == 6);
    const auto moved = f.kv.seq_cells(1);
    for (size_t i = 2; i < 4; ++i) {
        REQUIRE(f.kv.cell(moved[i]).seq.count() == 1);
        REQUIRE(f.kv.cell(moved[i]).shift == 10);
        REQUIRE(f.kv.cell(cells[i]).shift == 0);
        for (int il = 0; il < f.kv.n_layer(); ++il)
            for (ggml::Tensor* t : {f.kv.k(il), f.kv.v(il)}) {
                std::vector<char> a(t->nb[1]), b(t->nb[1]);
                ggml::tensor_get(t, a.data(), (size_t)cells[i] * t->nb[1], a.size());
                ggml::tensor_get(t, b.data(), (size_t)moved[i] * t->nb[1], b.size());
                REQUIRE(std::memcmp(a.data(), b.data(), a.size()) == 0);
            }
    }
}

TEST_CASE("seq_add of a shared cell in a full cache fails with a clear error", "[model][kv]") {
    Fixture f;
    fill(f.kv, 0, 0, 16);
    f.kv.seq_cp(0, 1, 0, -1);
    REQUIRE_THROWS_WITH(f.kv.seq_add(1, 8, -1, -4), Catch::Contains("no free cell"));
    // Nothing changed.
    REQUIRE(positions(f.kv, 1) == positions(f.kv, 0));
    REQUIRE(positions(f.kv, 1).size() == 16);
    REQUIRE_FALSE(f.kv.has_shift());
}

TEST_CASE("shift_context keeps n_keep tokens, drops half of the rest and compacts positions", "[model][kv]") {
    Fixture f;
    fill(f.kv, 0, 0, 11);
    std::vector<Token> tokens{100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110};
    REQUIRE(shift_context(f.kv, 0, tokens, 3) == 4);
    REQUIRE(tokens == std::vector<Token>{100, 101, 102, 107, 108, 109, 110});
    REQUIRE(positions(f.kv, 0) == std::vector<Pos>{0, 1, 2, 3, 4, 5, 6});
    std::vector<int32_t> cells, deltas;
    f.kv.pending_shifts(cells, deltas);
    REQUIRE(deltas == std::vector<int32_t>{-4, -4, -4, -4});
    // n_keep past the end: nothing to drop.
    REQUIRE(shift_context(f.kv, 0, tokens, 7) == 0);
    REQUIRE(tokens.size() == 7);
}

TEST_CASE("shift_context without room to copy shared cells changes nothing", "[model][kv]") {
    Fixture f;
    fill(f.kv, 0, 0, 10);
    f.kv.seq_cp(0, 1, 0, -1);
    fill(f.kv, 2, 0, 6);  // the cache is full
    std::vector<Token> tokens(10, 7);
    REQUIRE_THROWS_WITH(shift_context(f.kv, 1, tokens, 1), Catch::Contains("no room"));
    REQUIRE(tokens.size() == 10);
    REQUIRE(positions(f.kv, 1).size() == 10);
    REQUIRE_FALSE(f.kv.has_shift());
    // Once another sequence frees cells, the shift goes through and sequence 0 stays in place.
    f.kv.seq_rm(2, -1, -1);
    REQUIRE(shift_context(f.kv, 1, tokens, 1) == 4);
    REQUIRE(positions(f.kv, 1) == std::vector<Pos>{0, 1, 2, 3, 4, 5});
    REQUIRE(positions(f.kv, 0) == std::vector<Pos>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    REQUIRE(f.kv.n_used() == 15);
}

TEST_CASE("cache types whose blocks do not fit a head are refused", "[model][kv]") {
    auto backend = ggml::make_cpu_backend(1);
    HParams hp = tiny_hparams();
    hp.n_embd_head_k = hp.n_embd_head_v = 8;  // stories260K's head size
    hp.n_head_kv = 4;
    REQUIRE_THROWS_WITH(KvCache(hp, 16, ggml::Type::Q8_0, ggml::Type::F16, *backend),
                        Catch::Contains("K head size 8") && Catch::Contains("q8_0"));
    REQUIRE_THROWS_WITH(KvCache(hp, 16, ggml::Type::F16, ggml::Type::Q4_0, *backend),
                        Catch::Contains("V head size 8"));
    REQUIRE_NOTHROW(KvCache(hp, 16, ggml::Type::BF16, ggml::Type::F32, *backend));
}

namespace {
// Places one decode token of each sequence in turn, as a batch of several streams does, n_steps times.
void interleaved_decode(KvCache& kv, const std::vector<SeqId>& seqs, int n_steps) {
    for (int step = 0; step < n_steps; ++step) {
        std::vector<std::vector<SeqId>> ids;
        for (SeqId s : seqs) ids.push_back({s});
        std::vector<int32_t> cells;
        REQUIRE(kv.find_free((uint32_t)seqs.size(), ids.data(), cells));
        for (size_t i = 0; i < seqs.size(); ++i)
            kv.occupy(cells[i], kv.seq_pos_max(seqs[i]) + 1, {seqs[i]});
    }
}
}  // namespace

TEST_CASE("find_free keeps each sequence's cells in blocks of its own while streams decode together",
          "[model][kv][kv_blocks]") {
    auto backend = ggml::make_cpu_backend(1);
    KvCache kv{tiny_hparams(), 512, ggml::Type::F16, ggml::Type::F16, *backend};
    interleaved_decode(kv, {0, 1, 2, 3}, 40);  // 40 tokens each: two blocks per sequence
    const uint32_t B = (uint32_t)ggml::kKvBlock;
    for (SeqId s = 0; s < 4; ++s) {
        INFO("sequence " << s);
        for (int32_t c : kv.seq_cells(s))
            for (uint32_t j = (uint32_t)c / B * B; j < (uint32_t)c / B * B + B; ++j)
                CHECK((kv.cell(j).empty() || kv.cell(j).seq.test((size_t)s)));  // no other sequence's cells
        CHECK(kv.n_blocks_of(s, kv.n_kv()) == 2);
    }
    // The lowest-index placement would have interleaved them: every block would hold all four.
}

TEST_CASE("find_free by sequence uses every free cell before it reports a full cache", "[model][kv][kv_blocks]") {
    Fixture f;  // 16 cells: a partial block
    interleaved_decode(f.kv, {0, 1, 2}, 5);
    std::vector<std::vector<SeqId>> ids(1, std::vector<SeqId>{2});
    std::vector<int32_t> cells;
    REQUIRE(f.kv.find_free(1, ids.data(), cells));
    f.kv.occupy(cells[0], 5, {2});
    REQUIRE(f.kv.n_used() == 16);
    CHECK_FALSE(f.kv.find_free(1, ids.data(), cells));
}

TEST_CASE("fill_blocks lists the blocks of a token's sequences, which hold every cell its mask shows",
          "[model][kv][kv_blocks]") {
    auto backend = ggml::make_cpu_backend(1);
    KvCache kv{tiny_hparams(), 256, ggml::Type::F16, ggml::Type::F16, *backend};
    fill(kv, 0, 0, 50);  // a prompt of sequence 0, then streams 1 and 2 share its first 20 positions
    kv.seq_cp(0, 1, 0, 20);
    kv.seq_cp(0, 2, 0, 20);
    interleaved_decode(kv, {1, 2, 3}, 30);
    const uint32_t n_kv = kv.n_kv();
    const std::vector<std::vector<SeqId>> seqs = {{0}, {1}, {2}, {3}, {1, 3}, {0}, {1}};
    const std::vector<Pos> pos = {60, 60, 60, 60, 60, 5, 40};  // the last two see part of their sequence
    const size_t row_len = 1 + (n_kv + ggml::kKvBlock - 1) / ggml::kKvBlock;
    std::vector<int32_t> blocks(row_len * seqs.size());
    std::vector<float> mask(n_kv * seqs.size());
    kv.fill_blocks(pos.data(), seqs.data(), (uint32_t)seqs.size(), n_kv, blocks.data(), row_len);
    kv.fill_mask(pos.data(), seqs.data(), (uint32_t)seqs.size(), n_kv, mask.data());
    for (size_t t = 0; t < seqs.size(); ++t) {
        INFO("token " << t);
        const int32_t* row = &blocks[t * row_len];
        std::vector<bool> listed(row_len - 1, false);
        for (int32_t i = 0; i < row[0]; ++i) {
            if (i > 0) CHECK(row[1 + i] > row[i]);  // ascending
            listed[(size_t)row[1 + i]] = true;
        }
        int visible = 0;
        for (uint32_t j = 0; j < n_kv; ++j)
            if (mask[t * n_kv + j] == 0.0f) {
                ++visible;
                CHECK(listed[j / ggml::kKvBlock]);
            }
        CHECK(visible > 0);
        // A listed block holds a cell of the token's sequences.
        for (int32_t i = 0; i < row[0]; ++i) {
            bool mine = false;
            const uint32_t j0 = (uint32_t)(row[1 + i] * ggml::kKvBlock);
            for (uint32_t j = j0; j < std::min(n_kv, j0 + (uint32_t)ggml::kKvBlock); ++j)
                for (SeqId s : seqs[t]) mine |= !kv.cell(j).empty() && kv.cell(j).seq.test((size_t)s);
            CHECK(mine);
        }
    }
    // Sequence 3 never shared the prompt: it visits its own block only, not the prompt's two.
    CHECK(blocks[3 * row_len] == 1);
}

TEST_CASE("fill_blocks leaves out the blocks after a token when causal, and lists them when not",
          "[model][kv][kv_blocks]") {
    auto backend = ggml::make_cpu_backend(1);
    KvCache kv{tiny_hparams(), 256, ggml::Type::F16, ggml::Type::F16, *backend};
    fill(kv, 0, 0, 100);  // a 100-token prompt: cells 0-99 hold positions 0-99, blocks 0-3
    const uint32_t n_kv = kv.n_kv();
    const std::vector<std::vector<SeqId>> seqs = {{0}, {0}, {0}, {0}};
    const std::vector<Pos> pos = {0, 31, 32, 99};
    const size_t row_len = 1 + (n_kv + ggml::kKvBlock - 1) / ggml::kKvBlock;
    std::vector<int32_t> blocks(row_len * seqs.size());
    auto listed = [&](size_t t) {
        const int32_t* row = &blocks[t * row_len];
        return std::vector<int32_t>(row + 1, row + 1 + row[0]);
    };
    kv.fill_blocks(pos.data(), seqs.data(), (uint32_t)seqs.size(), n_kv, blocks.data(), row_len, true);
    CHECK(listed(0) == std::vector<int32_t>{0});
    CHECK(listed(1) == std::vector<int32_t>{0});
    CHECK(listed(2) == std::vector<int32_t>{0, 1});
    CHECK(listed(3) == std::vector<int32_t>{0, 1, 2, 3});
    kv.fill_blocks(pos.data(), seqs.data(), (uint32_t)seqs.size(), n_kv, blocks.data(), row_len, false);
    for (size_t t = 0; t < seqs.size(); ++t) CHECK(listed(t) == std::vector<int32_t>{0, 1, 2, 3});
}
