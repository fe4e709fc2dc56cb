// Sequence operations with a real model: sequences that share a prefix through seq_cp, removal of a
// tail (as speculative decoding does) and seq_keep give the reference's greedy output.
#include <catch2/catch.hpp>
#include <cstring>

#include "seq_util.h"

using namespace engine;

namespace {
struct Stories {
    std::unique_ptr<Model> model = Model::load(shared_path("models/stories260K.gguf"));
    nlohmann::json golden = load_golden("stories260K.greedy.json");
    std::vector<Token> prompt(int c) const {
        return golden["cases"][c]["prompt_tokens"].get<std::vector<Token>>();
    }
    std::vector<Token> want(int c) const {
        return golden["cases"][c]["completion_tokens"].get<std::vector<Token>>();
    }
    ContextParams params(uint32_t n_seq) const {
        ContextParams cp;
        cp.n_ctx = 512;
        cp.n_seq_max = n_seq;
        cp.n_threads = cp.n_threads_batch = 2;
        return cp;
    }
};
}  // namespace

TEST_CASE("greedy output is identical before and after a seq_cp copy of the prompt", "[model][kv]") {
    Stories s;
    for (int c = 0; c < 2; ++c) {
        Context ctx(*s.model, s.params(3));
        const auto prompt = s.prompt(c), want = s.want(c);
        const auto logits = eval_seq(ctx, 0, prompt, 0);
        ctx.kv().seq_cp(0, 1, 0, -1);
        ctx.kv().seq_cp(0, 2, 0, -1);
        REQUIRE(ctx.kv().n_used() == prompt.size());  // the prompt is stored once
        const Pos n = (Pos)prompt.size();
        REQUIRE(greedy_from(ctx, 1, logits, n, (int)want.size()) == want);
        REQUIRE(greedy_from(ctx, 0, logits, n, (int)want.size()) == want);
        ctx.kv().seq_rm(1, -1, -1);  // removing one copy leaves the others intact
        REQUIRE(greedy_from(ctx, 2, logits, n, (int)want.size()) == want);
    }
}

TEST_CASE("seq_rm of a tail and re-evaluation give the same tokens", "[model][kv]") {
    Stories s;
    Context ctx(*s.model, s.params(1));
    const auto prompt = s.prompt(2), want = s.want(2);
    const Pos n = (Pos)prompt.size();
    const auto first = greedy_from(ctx, 0, eval_seq(ctx, 0, prompt, 0), n, 30);
    REQUIRE(std::equal(first.begin(), first.end(), want.begin()));
    // Drop the last 10 evaluated tokens and redo them.
    ctx.kv().seq_rm(0, n + 19, -1);
    REQUIRE(ctx.kv().seq_pos_max(0) == n + 18);
    const auto logits = eval_seq(ctx, 0, {first[19]}, n + 19);
    const auto again = greedy_from(ctx, 0, logits, n + 20, (int)want.size() - 20);
    REQUIRE(std::equal(again.begin(), again.end(), want.begin() + 20));
}

TEST_CASE("seq_keep keeps one sequence whole and frees the others", "[model][kv]") {
    Stories s;
    Context ctx(*s.model, s.params(2));
    const auto p0 = s.prompt(0), p1 = s.prompt(1);
    eval_seq(ctx, 1, p1, 0);
    const auto logits = eval_seq(ctx, 0, p0, 0);
    ctx.kv().seq_keep(0);
    REQUIRE(ctx.kv().n_used() == p0.size());
    REQUIRE(ctx.kv().seq_pos_max(1) == -1);
    REQUIRE(greedy_from(ctx, 0, logits, (Pos)p0.size(), (int)s.want(0).size()) == s.want(0));
}

TEST_CASE("a stream's attention visits its own cache blocks, not the prompts other sequences hold",
          "[model][kv][kv_blocks]") {
    // Sequences 1-3 hold long prompts (as slots with cached prompts do); sequence 0 then decodes. Its
    // tokens' attention visits only the blocks holding its own cells (the graph's kv_blocks rows), and its
    // logits are the bits of the same stream in an otherwise empty cache.
    Stories s;
    const auto prompt = s.prompt(0);
    std::vector<Token> other;
    while (other.size() < 150) other.insert(other.end(), prompt.begin(), prompt.end());
    std::vector<std::vector<float>> alone, beside;
    for (bool crowded : {false, true}) {
        ContextParams cp = s.params(4);
        cp.n_ctx = 2048;
        Context ctx(*s.model, cp);
        if (crowded)
            for (SeqId q = 1; q < 4; ++q) eval_seq(ctx, q, other, 0);
        const auto logits = eval_seq(ctx, 0, prompt, 0);
        greedy_from(ctx, 0, logits, (Pos)prompt.size(), 24, crowded ? &beside : &alone);
        const uint32_t n_kv = ctx.kv().n_kv();
        const size_t own = ctx.kv().seq_cells(0).size();
        INFO("n_kv " << n_kv << ", own cells " << own);
        if (crowded) CHECK(n_kv >= 3 * other.size());
        // The blocks a token of sequence 0 visits: as few as its own cells fill.
        const uint32_t blocks = ctx.kv().n_blocks_of(0, n_kv);
        CHECK(blocks == (own + ggml::kKvBlock - 1) / ggml::kKvBlock);
    }
    REQUIRE(alone.size() == beside.size());
    for (size_t i = 0; i < alone.size(); ++i) {
        INFO("step " << i);
        CHECK(std::memcmp(alone[i].data(), beside[i].data(), alone[i].size() * sizeof(float)) == 0);
    }
}
