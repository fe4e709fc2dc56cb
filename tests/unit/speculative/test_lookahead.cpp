// Lookahead decoding without a model: parameter checks, the n-gram pool, the layout of a step (every
// lane a causal chain of consecutive positions that sees no other lane), tree verification against plain
// sampling, whole decoding loops over toy models (greedy output equal to plain decoding; the window and
// pool really find n-grams), and the controller's choices.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <set>

#include "engine/speculative/lookahead.h"
#include "engine/speculative/verify.h"

using namespace engine;
using namespace engine::spec;

namespace {

SamplingParams params(uint32_t seed, float temperature) {
    SamplingParams p;
    p.seed = seed;
    p.temperature = temperature;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    return p;
}

// A toy model: the next token is a function of the token and its position, of the token alone, or of
// the position alone (a fixed text: every guess for a position is right at once, whatever precedes it).
struct ToyModel {
    enum Kind { TokenAndPos, TokenOnly, PosOnly };
    int32_t n_vocab = 97;
    Kind kind = TokenAndPos;
    Token next(Token t, int32_t pos) const {
        if (kind == PosOnly) {  // splitmix64 of the position
            uint64_t z = (uint64_t)(pos + 1) * 0x9e3779b97f4a7c15ull;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            return (Token)((z ^ (z >> 31)) % (uint64_t)n_vocab);
        }
        return (Token)(((int64_t)t * 7 + (kind == TokenAndPos ? pos * 3 : 0) + 1) % n_vocab);
    }
    std::vector<float> row(Token t, int32_t pos) const {
        std::vector<float> r((size_t)n_vocab, 0.0f);
        r[(size_t)next(t, pos)] = 5.0f;
        return r;
    }
};

// Tokens a lane sees in a step: the input (offset 0) and the tokens that belong to it, by position.
std::vector<std::pair<int32_t, Token>> lane_chain(const LookaheadLayout& l, Token x, int32_t lane) {
    std::vector<std::pair<int32_t, Token>> c{{0, x}};
    for (size_t k = 0; k < l.tokens.size(); ++k)
        if (std::find(l.lanes[k].begin(), l.lanes[k].end(), lane) != l.lanes[k].end())
            c.emplace_back(l.pos[k], l.tokens[k]);
    std::sort(c.begin(), c.end());
    return c;
}

struct LoopResult {
    std::vector<Token> out;
    int64_t steps = 0, accepted = 0, evaluated = 0;
};

// Decodes n tokens after `prompt` with lookahead steps of shape (w, g), verifying as the server does.
LoopResult run_loop(const ToyModel& m, std::vector<Token> prompt, const LookaheadParams& p, int32_t w,
                    int32_t g, size_t n, float temperature = 0.0f, uint32_t seed = 1,
                    int32_t budget = 1 << 20, LookaheadState* slot_state = nullptr) {
    // A fresh state per request, or the slot's, whose pool stays from its earlier requests.
    LookaheadState fresh;
    LookaheadState& st = slot_state ? *slot_state : fresh;
    st.begin(p, prompt, slot_state != nullptr);
    const std::vector<std::string> pieces((size_t)m.n_vocab);
    SamplerChain chain(params(seed, temperature), m.n_vocab, 4096, pieces);
    std::vector<Token> history = prompt;
    // The first token comes from the prompt's last row, as in the server.
    int32_t pos = (int32_t)prompt.size() - 1;
    {
        const std::vector<float> r = m.row(prompt.back(), pos);
        const Token t = chain.sample(r.data());
        chain.accept(t);
        history.push_back(t);
    }
    LoopResult res;
    while (history.size() - prompt.size() < n) {
        const Token x = history.back();
        pos = (int32_t)history.size() - 1;  // x's position
        const LookaheadLayout l = st.layout(x, history, w, g, budget, 1 << 10, 1 << 20);
        // Rows: each token's logits from its own token and position (the toy model needs no more).
        const std::vector<float> r0 = m.row(x, pos);
        std::vector<std::vector<std::vector<float>>> br(l.branches.size());
        std::vector<std::vector<const float*>> rows(l.branches.size());
        for (size_t b = 0; b < l.branches.size(); ++b) {
            for (size_t i = 0; i < l.branches[b].size(); ++i)
                br[b].push_back(m.row(l.branches[b][i], pos + 1 + (int32_t)i));
            for (auto& r : br[b]) rows[b].push_back(r.data());
        }
        int32_t followed = -2;
        const Verified v = verify_tree_by_sampling(chain, r0.data(), l.branches, rows, {}, &followed);
        if (v.n_accepted() > 0) {
            REQUIRE(followed >= 0);
            REQUIRE(std::equal(v.tokens.begin(), v.tokens.end() - 1, l.branches[(size_t)followed].begin()));
        }
        std::vector<Token> next;
        for (int32_t i = 0; i < l.w; ++i) {
            const int32_t k = l.window_rows[(size_t)i];
            next.push_back(k == 0 ? m.next(x, pos) : m.next(l.tokens[(size_t)k - 1], pos + l.pos[(size_t)k - 1]));
        }
        st.update(l, x, next, v.tokens, history);
        history.insert(history.end(), v.tokens.begin(), v.tokens.end());
        res.steps += 1;
        res.accepted += (int64_t)v.n_accepted();
        res.evaluated += (int64_t)l.tokens.size();
    }
    st.end(history);
    res.out.assign(history.begin() + (long)prompt.size(), history.begin() + (long)(prompt.size() + n));
    return res;
}

std::vector<Token> plain_loop(const ToyModel& m, const std::vector<Token>& prompt, size_t n, float temperature = 0.0f,
                              uint32_t seed = 1) {
    const std::vector<std::string> pieces((size_t)m.n_vocab);
    SamplerChain chain(params(seed, temperature), m.n_vocab, 4096, pieces);
    std::vector<Token> h = prompt;
    while (h.size() - prompt.size() < n) {
        const std::vector<float> r = m.row(h.back(), (int32_t)h.size() - 1);
        const Token t = chain.sample(r.data());
        chain.accept(t);
        h.push_back(t);
    }
    return std::vector<Token>(h.begin() + (long)prompt.size(), h.end());
}

}  // namespace

TEST_CASE("lookahead parameters: zero or out-of-range W, N, G and windows that do not fit are refused",
          "[speculative][lookahead]") {
    CHECK(lookahead_param_error({15, 5, 15}).empty());
    CHECK(lookahead_param_error({1, 2, 1}).empty());
    CHECK_THAT(lookahead_param_error({0, 5, 15}), Catch::Contains("W"));
    CHECK_THAT(lookahead_param_error({15, 0, 15}), Catch::Contains("N"));
    CHECK_THAT(lookahead_param_error({15, 1, 15}), Catch::Contains("N"));
    CHECK_THAT(lookahead_param_error({15, 5, 0}), Catch::Contains("G"));
    CHECK_THAT(lookahead_param_error({-3, 5, 15}), Catch::Contains("W"));
    CHECK_THAT(lookahead_param_error({65, 5, 15}), Catch::Contains("W"));
    CHECK_THAT(lookahead_param_error({15, 17, 15}), Catch::Contains("N"));
    CHECK(lookahead_step_tokens({15, 5, 15}) == 120);
    CHECK(lookahead_step_lanes({15, 5, 15}) == 30);
    CHECK(lookahead_step_reach({15, 5, 15}) == 17);
    CHECK(lookahead_step_reach({1, 5, 15}) == 4);
    CHECK(lookahead_fit_error({15, 5, 15}, 2048, 512, 30).empty());
    CHECK_THAT(lookahead_fit_error({15, 5, 15}, 64, 512, 30), Catch::Contains("n_batch 64"));
    CHECK_THAT(lookahead_fit_error({15, 5, 15}, 2048, 16, 30), Catch::Contains("context"));
    CHECK_THAT(lookahead_fit_error({15, 5, 15}, 2048, 512, 29), Catch::Contains("sequence ids"));
    CHECK_THAT(lookahead_fit_error({15, 1, 15}, 2048, 512, 30), Catch::Contains("N"));
    // Shrinking to fit: W and G come down, the larger first (W alone for the reach); N stays; what cannot
    // fit is returned as it was.
    CHECK(lookahead_shrink_to_fit({15, 5, 15}, 2048, 512, 30) == LookaheadParams{15, 5, 15});
    CHECK(lookahead_shrink_to_fit({15, 5, 15}, 64, 512, 30) == LookaheadParams{8, 5, 8});
    CHECK(lookahead_shrink_to_fit({15, 5, 15}, 2048, 512, 20) == LookaheadParams{10, 5, 10});
    CHECK(lookahead_shrink_to_fit({15, 5, 4}, 64, 512, 30) == LookaheadParams{12, 5, 4});
    CHECK(lookahead_shrink_to_fit({15, 5, 15}, 2048, 10, 30) == LookaheadParams{6, 5, 15});
    CHECK(lookahead_shrink_to_fit({15, 5, 15}, 4, 512, 30) == LookaheadParams{15, 5, 15});
    for (uint32_t b : {8u, 16u, 33u, 64u, 100u, 512u})
        for (int32_t ctx : {8, 12, 64})
            for (int32_t lanes : {2, 5, 30}) {
                const LookaheadParams q = lookahead_shrink_to_fit({15, 5, 15}, b, ctx, lanes);
                INFO("n_batch " << b << ", slot context " << ctx << ", lanes " << lanes);
                // Either it fits now, or nothing with N 5 could (W = G = 1 does not) and p came back.
                if (lookahead_fit_error(q, b, ctx, lanes).empty()) continue;
                CHECK(q == LookaheadParams{15, 5, 15});
                CHECK_FALSE(lookahead_fit_error({1, 5, 1}, b, ctx, lanes).empty());
            }
}

TEST_CASE("n-gram pool: keyed by the first token, newest first, no duplicates, at most G per key",
          "[speculative][lookahead]") {
    NgramPool pool;
    pool.reset(3, 2);
    pool.add(1, std::vector<Token>{2, 3});
    pool.add(1, std::vector<Token>{4, 5});
    REQUIRE(pool.size() == 2);
    REQUIRE(pool.find(1).size() == 2);
    CHECK(pool.find(1)[0].rest == std::vector<Token>{4, 5});
    pool.add(1, std::vector<Token>{2, 3});  // again: moves to the front, no copy
    CHECK(pool.size() == 2);
    CHECK(pool.find(1)[0].rest == std::vector<Token>{2, 3});
    pool.add(1, std::vector<Token>{6, 7});  // a third: the oldest ({4, 5}) goes
    CHECK(pool.size() == 2);
    CHECK(pool.find(1)[0].rest == std::vector<Token>{6, 7});
    CHECK(pool.find(1)[1].rest == std::vector<Token>{2, 3});
    pool.add(1, std::vector<Token>{9});  // wrong length: ignored
    CHECK(pool.size() == 2);
    CHECK(pool.find(8).empty());

    // Seeding from a sequence: every n-gram, later ones first.
    pool.reset(3, 4);
    const std::vector<Token> prompt = {10, 11, 12, 10, 11, 13};
    pool.add_sequence(prompt);
    CHECK(pool.size() == 4);  // 10 11 12, 11 12 10, 12 10 11, 10 11 13
    REQUIRE(pool.find(10).size() == 2);
    CHECK(pool.find(10)[0].rest == std::vector<Token>{11, 13});
    CHECK(pool.find(10)[1].rest == std::vector<Token>{11, 12});
    // Each keeps the tokens before its key, nearest first.
    CHECK(pool.find(10)[0].n_before == 3);
    CHECK(pool.find(10)[0].before[0] == 12);
    CHECK(pool.find(10)[0].before[1] == 11);
    CHECK(pool.find(10)[0].before[2] == 10);
    CHECK(pool.find(10)[1].n_before == 0);
    // Ranked by how far the context before the key matches (the context continues the seeded tokens).
    std::vector<Token> ctx = prompt;
    ctx.insert(ctx.end(), {12, 10});
    CHECK(pool.best(ctx, 4) == std::vector<std::vector<Token>>{{11, 13}, {11, 12}});
    CHECK(pool.best(ctx, 1) == std::vector<std::vector<Token>>{{11, 13}});
    ctx = prompt;
    ctx.insert(ctx.end(), {3, 10});
    CHECK(pool.best(ctx, 4) == std::vector<std::vector<Token>>{{11, 13}, {11, 12}});  // no match: newest first
    CHECK(pool.best(std::vector<Token>{3}, 4).empty());
    // Longer matches win: in 1 2 3 4 | 7 2 3 5 | ... 1 2 3 the continuation 4 comes first, though 5 is newer.
    pool.reset(2, 4);
    const std::vector<Token> text = {1, 2, 3, 4, 7, 2, 3, 5, 8, 1, 2, 3};
    pool.add_sequence(std::span<const Token>(text).first(11));
    CHECK(pool.best(text, 2) == std::vector<std::vector<Token>>{{4}, {5}});
    // Window n-grams rank by their previous token.
    pool.reset(3, 4);
    pool.add(10, std::vector<Token>{11, 12}, std::vector<Token>{7});
    pool.add(10, std::vector<Token>{11, 13}, std::vector<Token>{5});
    CHECK(pool.best(std::vector<Token>{7, 10}, 4) == std::vector<std::vector<Token>>{{11, 12}, {11, 13}});
    CHECK(pool.best(std::vector<Token>{5, 10}, 4) == std::vector<std::vector<Token>>{{11, 13}, {11, 12}});
    // Only the n-grams that end at or after `from`.
    pool.reset(3, 4);
    pool.add_sequence(prompt, 5);
    CHECK(pool.size() == 1);
    CHECK(pool.find(10).size() == 1);
}

TEST_CASE("lookahead layout: each lane is a causal chain of consecutive positions that sees no other lane",
          "[speculative][lookahead]") {
    for (const LookaheadParams p : {LookaheadParams{4, 4, 3}, LookaheadParams{5, 2, 2}, LookaheadParams{3, 5, 1},
                                    LookaheadParams{15, 5, 15}}) {
        INFO("W " << p.w << " N " << p.n << " G " << p.g);
        LookaheadState st;
        std::vector<Token> prompt;
        for (int i = 0; i < 60; ++i) prompt.push_back((Token)(i % 9 + 1));  // 1..9 repeating: 9 n-grams per key
        st.begin(p, prompt);
        const Token x = 4;
        const LookaheadLayout l = st.layout(x, {}, p.w, p.g, 1 << 20, 1 << 10, 1 << 20);
        const int32_t wt = p.n == 2 ? p.w - 1 : p.w * (p.n - 1) - 1;
        REQUIRE(l.w == p.w);
        REQUIRE(l.g == std::min(p.g, 1));  // the pool has one continuation of 4 (5 6 7 ...)
        REQUIRE((int32_t)l.tokens.size() == wt + l.g * (p.n - 1));
        REQUIRE(l.pos.size() == l.tokens.size());
        REQUIRE(l.lanes.size() == l.tokens.size());
        for (int32_t lane = 0; lane < l.n_lanes(); ++lane) {
            const auto chain = lane_chain(l, x, lane);
            for (size_t k = 0; k < chain.size(); ++k) REQUIRE(chain[k].first == (int32_t)k);  // 0, 1, 2, ...
            if (lane < l.w) {
                // window column: x, L0[1..i], L1[i], ..., L(N-2)[i]
                REQUIRE((int32_t)chain.size() == lane + p.n - 1);
                for (int32_t j = 1; j <= lane; ++j) REQUIRE(chain[(size_t)j].second == st.window(0, j));
                for (int32_t j = 1; j <= p.n - 2; ++j)
                    REQUIRE(chain[(size_t)(lane + j)].second == st.window(j, lane));
                // its prediction row is its last token
                const int32_t row = l.window_rows[(size_t)lane];
                REQUIRE((row == 0 ? 0 : l.pos[(size_t)row - 1]) == (int32_t)chain.size() - 1);
                if (row > 0) REQUIRE(l.logits[(size_t)row - 1] == 1);
            } else {
                const auto& br = l.branches[(size_t)(lane - l.w)];
                REQUIRE(chain.size() == br.size() + 1);
                for (size_t k = 0; k < br.size(); ++k) REQUIRE(chain[k + 1].second == br[k]);
                REQUIRE(br == std::vector<Token>(prompt.begin() + 4, prompt.begin() + 4 + (p.n - 1)));
            }
        }
    }
}

TEST_CASE("lookahead layout: a crowded step drops window columns first, then branches, down to nothing",
          "[speculative][lookahead]") {
    const LookaheadParams p{4, 3, 3};
    LookaheadState st;
    // Three continuations of token 1.
    st.begin(p, std::vector<Token>{1, 2, 3, 1, 4, 5, 1, 6, 7});
    const LookaheadLayout full = st.layout(1, {}, 4, 3, 1 << 20, 64, 100);
    REQUIRE(full.w == 4);
    REQUIRE(full.g == 3);
    REQUIRE(full.tokens.size() == 7 + 6);
    const LookaheadLayout b9 = st.layout(1, {}, 4, 3, 9, 64, 100);  // 6 for the branches, 3 for 2 columns
    CHECK(b9.w == 2);
    CHECK(b9.g == 3);
    CHECK(b9.tokens.size() == 9);
    const LookaheadLayout b5 = st.layout(1, {}, 4, 3, 5, 64, 100);
    CHECK(b5.w == 0);
    CHECK(b5.g == 2);
    const LookaheadLayout lanes = st.layout(1, {}, 4, 3, 1 << 20, 4, 100);
    CHECK(lanes.w == 1);  // one column alone still evaluates N - 2 tokens
    CHECK(lanes.g == 3);
    CHECK(st.layout(1, {}, 4, 3, 1, 64, 100).empty());
    CHECK(st.layout(1, {}, 4, 3, 1 << 20, 0, 100).empty());
    // Reach: branches need N - 1 positions after the input, column i reaches i + N - 2.
    const LookaheadLayout r3 = st.layout(1, {}, 4, 3, 1 << 20, 64, 3);
    CHECK(r3.w == 3);
    CHECK(r3.g == 3);
    const LookaheadLayout r1 = st.layout(1, {}, 4, 3, 1 << 20, 64, 1);
    CHECK(r1.g == 0);
    CHECK(r1.w == 1);
    for (size_t k = 0; k < r1.pos.size(); ++k) CHECK(r1.pos[k] <= 1);
    // No continuation of the input and no window: nothing to evaluate.
    CHECK(st.layout(99, {}, 0, 3, 1 << 20, 64, 100).empty());
}

TEST_CASE("lookahead decoding of toy models: greedy output equals plain decoding for every shape",
          "[speculative][lookahead]") {
    for (const ToyModel::Kind kind : {ToyModel::TokenAndPos, ToyModel::TokenOnly, ToyModel::PosOnly}) {
        ToyModel m;
        m.kind = kind;
        const std::vector<Token> prompt = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};
        const std::vector<Token> want = plain_loop(m, prompt, 300);
        for (const LookaheadParams p :
             {LookaheadParams{15, 5, 15}, LookaheadParams{4, 3, 2}, LookaheadParams{1, 2, 1}, LookaheadParams{6, 2, 4}}) {
            INFO("model " << (int)kind << " W " << p.w << " N " << p.n << " G " << p.g);
            for (const auto& [w, g] : {std::pair{p.w, p.g}, std::pair{0, p.g}, std::pair{p.w, 0}}) {
                const LoopResult r = run_loop(m, prompt, p, w, g, 300);
                REQUIRE(r.out == want);
            }
        }
    }
}

TEST_CASE("lookahead decoding of toy models: the window finds the n-grams ahead and branches accept them",
          "[speculative][lookahead]") {
    // A fixed text (the next token depends on the position only): the prompt holds none of its n-grams,
    // but every column of the window converges to the text ahead within N - 1 steps, so its n-grams are in
    // the pool before the input reaches them.
    ToyModel m;
    m.kind = ToyModel::PosOnly;
    const std::vector<Token> prompt = {3};
    const LookaheadParams p{15, 5, 15};
    const LoopResult window = run_loop(m, prompt, p, p.w, p.g, 200);
    const LoopResult branches_only = run_loop(m, prompt, p, 0, p.g, 200);
    REQUIRE(window.out == plain_loop(m, prompt, 200));
    REQUIRE(branches_only.out == window.out);
    // Without a window only the output's own n-grams are there: far fewer tokens accepted.
    CHECK(window.accepted > 3 * branches_only.accepted);
    // Most steps accept most of a branch.
    CHECK(window.accepted * 2 > window.steps * (p.n - 1));
    // Also with a narrow window of two levels.
    const LoopResult narrow = run_loop(m, prompt, {4, 3, 4}, 4, 4, 200);
    REQUIRE(narrow.out == window.out);
    CHECK(narrow.accepted > narrow.steps / 2);
}

TEST_CASE("lookahead: sampled output equals plain sampling with the same seed (tree verification is exact)",
          "[speculative][lookahead]") {
    // A bigram model with soft rows: several tokens are likely, so branches are sometimes accepted and
    // sometimes not; with the same seed the chain must draw exactly what plain decoding draws.
    struct Soft : ToyModel {
        std::vector<float> row(Token t, int32_t) const {
            std::vector<float> r((size_t)n_vocab, -4.0f);
            for (int k = 0; k < 3; ++k) r[(size_t)((t * 5 + k) % n_vocab)] = 1.0f - 0.5f * (float)k;
            return r;
        }
    };
    int64_t accepted = 0, steps = 0;
    for (uint32_t seed = 1; seed <= 60; ++seed) {
        Soft m;
        m.n_vocab = 11;
        const std::vector<std::string> pieces(11);
        const std::vector<Token> prompt = {1, 5, 3, 4, 9, 1, 5, 3, 4, 9, 1};
        // plain
        SamplerChain plain(params(seed, 1.0f), m.n_vocab, 4096, pieces);
        std::vector<Token> want;
        Token last = prompt.back();
        while (want.size() < 40) {
            const auto r = m.row(last, 0);
            last = plain.sample(r.data());
            plain.accept(last);
            want.push_back(last);
        }
        // lookahead (branches from the prompt and the output; rows depend on the last token only)
        LookaheadState st;
        st.begin({3, 3, 4}, prompt);
        SamplerChain chain(params(seed, 1.0f), m.n_vocab, 4096, pieces);
        std::vector<Token> history = prompt, got;
        {
            const auto r = m.row(prompt.back(), 0);
            const Token t = chain.sample(r.data());
            chain.accept(t);
            history.push_back(t);
            got.push_back(t);
        }
        while (got.size() < 40) {
            const Token x = history.back();
            const LookaheadLayout l = st.layout(x, history, 0, 4, 1 << 20, 64, 1 << 20);
            const auto r0 = m.row(x, 0);
            std::vector<std::vector<std::vector<float>>> br(l.branches.size());
            std::vector<std::vector<const float*>> rows(l.branches.size());
            for (size_t b = 0; b < l.branches.size(); ++b) {
                for (Token t : l.branches[b]) br[b].push_back(m.row(t, 0));
                for (auto& r : br[b]) rows[b].push_back(r.data());
            }
            const Verified v = verify_tree_by_sampling(chain, r0.data(), l.branches, rows, {}, nullptr);
            accepted += (int64_t)v.n_accepted();
            steps += 1;
            st.update(l, x, {}, v.tokens, history);
            history.insert(history.end(), v.tokens.begin(), v.tokens.end());
            got.insert(got.end(), v.tokens.begin(), v.tokens.end());
        }
        got.resize(40);
        REQUIRE(got == want);
    }
    // Branches were accepted now and then, so the tree was really walked.
    CHECK(accepted > steps / 10);
}

TEST_CASE("lookahead controller: large steps when they pay, plain decoding with rare cheap probes when not",
          "[speculative][lookahead]") {
    const LookaheadParams p{15, 5, 15};
    // A simulated machine: a plain step takes 1 ms, each extra token r ms more; a shape emits `emit` tokens.
    const auto extra_of = [&](const LookaheadController& c, int k) {
        const auto& s = c.shapes()[(size_t)k];
        return (double)((s.w == 0 ? 0 : s.w * (p.n - 1) - 1) + s.g * (p.n - 1));
    };
    const auto run = [&](double r, const std::function<int(int)>& emit, int n, std::map<int, int>& chosen) {
        LookaheadController c;
        c.reset(p);
        double time = 0, tokens = 0;
        for (int i = 0; i < n; ++i) {
            const int k = c.want(r);
            ++chosen[k];
            const double t = 1e-3 * (1.0 + (k > 0 ? r * extra_of(c, k) : 0.0));
            const int e = k > 0 ? emit(k) : 1;
            c.observe(k, e, t, 1);
            time += t;
            tokens += e;
        }
        return tokens / time / 1e3;  // tokens per plain-step time
    };
    SECTION("extra tokens nearly free and branches accepted: a lookahead shape wins") {
        std::map<int, int> chosen;
        const double speed = run(0.001, [](int) { return 3; }, 500, chosen);
        CHECK(chosen[0] < 50);
        CHECK(speed > 2.5);
    }
    SECTION("extra tokens cost a fifth of a step each and nothing is accepted: plain, probes cost under 2 %") {
        std::map<int, int> chosen;
        const double speed = run(0.2, [](int) { return 1; }, 20000, chosen);
        CHECK(speed > 0.98);
        CHECK(chosen[0] > 19500);
    }
    SECTION("a cheap shape that pays is chosen over an expensive one that pays no more") {
        std::map<int, int> chosen;
        run(0.05, [](int) { return 3; }, 2000, chosen);
        CHECK(chosen[1] > 1800);  // one branch, no window
    }
    SECTION("a window that pays more than its cost is chosen") {
        // Only the full window finds the text ahead: five tokens per step for 119 extra tokens at 0.5 % each.
        std::map<int, int> chosen;
        // Before it is measured, its cost is estimated at 119 * 2 % of a step: the first probe waits.
        const double speed = run(0.005, [&](int k) { return k == 5 ? 5 : 1; }, 5000, chosen);
        CHECK(chosen[5] > 3000);
        CHECK(speed > 2.5);
    }
    SECTION("the other streams' time counts: a shape that helps one stream but slows four does not run") {
        LookaheadController c;
        c.reset(p);
        int lookahead = 0;
        for (int i = 0; i < 5000; ++i) {
            const int k = c.want(0.05, 4);
            lookahead += k > 0 ? 1 : 0;
            // Four streams: the iteration takes 4 ms plus 0.3 ms per extra token of this slot's step;
            // this slot's branches give it 1.5 tokens per step.
            const double t = 4e-3 + (k > 0 ? 0.3e-3 * extra_of(c, k) : 0.0);
            c.observe(k, k > 0 ? 2 : 1, t, 4);
        }
        CHECK(lookahead < 250);
    }
    SECTION("what pays at one stream is judged apart from four streams, where it does not pay") {
        LookaheadController c;
        c.reset(p);
        int one = 0, four = 0, n_one = 0, n_four = 0;
        for (int i = 0; i < 8000; ++i) {
            // The slot alternates between running alone and beside three others (streams come and go).
            const int32_t streams = (i / 50) % 2 == 0 ? 1 : 4;
            const int k = c.want(0.05, streams);
            // One branch (4 extra tokens) gives 2.5 tokens a step. Alone: 1 ms + 0.05 ms a token, it pays.
            // Beside three others: 4 ms + 0.6 ms a token (compute-bound), it does not.
            const double t = streams == 1 ? 1e-3 + (k > 0 ? 0.05e-3 * extra_of(c, k) : 0.0)
                                          : 4e-3 + (k > 0 ? 0.6e-3 * extra_of(c, k) : 0.0);
            c.observe(k, k > 0 ? (k == 1 ? 3 : 2) : 1, t, streams);
            (streams == 1 ? n_one : n_four) += 1;
            (streams == 1 ? one : four) += k > 0 ? 1 : 0;
        }
        CHECK(one > n_one * 8 / 10);
        CHECK(four < n_four / 20);
        CHECK(c.gain(1, 1) > 1.5);
        CHECK(c.gain(1, 4) < 1.0);
        CHECK(c.gain(1, 3) == c.gain(1, 4));  // 3 and 4 streams share a bucket
    }
}

TEST_CASE("n-gram pool: best() reports how many tokens of context each continuation matches",
          "[speculative][lookahead]") {
    NgramPool pool;
    pool.reset(2, 4);
    const std::vector<Token> text = {1, 2, 3, 4, 7, 2, 3, 5, 8, 1, 2, 3};
    pool.add_sequence(std::span<const Token>(text).first(11));
    std::vector<int32_t> m;
    CHECK(pool.best(text, 2, &m) == std::vector<std::vector<Token>>{{4}, {5}});
    // 3 after "1 2" (key at index 2: 2 and 1 match, then the start) and after "7 2" (one token).
    CHECK(m == std::vector<int32_t>{2, 1});
    // best_match: the first one's match and how many there are, without building them.
    int32_t n_found = -1;
    CHECK(pool.best_match(text, &n_found) == 2);
    CHECK(n_found == 2);
    CHECK(pool.best_match(std::vector<Token>{7, 2, 3}, &n_found) == 2);  // "7 2" before 3: the other one
    CHECK(pool.best_match(std::vector<Token>{5, 3}) == 0);               // no context matches
    CHECK(pool.best(std::vector<Token>{9}, 2, &m).empty());
    CHECK(m.empty());
    CHECK(pool.best_match(std::vector<Token>{9}, &n_found) == -1);
    CHECK(n_found == 0);
    CHECK(pool.best_match({}, &n_found) == -1);
}

TEST_CASE("lookahead layout: branches may be cut to their first tokens", "[speculative][lookahead]") {
    const LookaheadParams p{4, 5, 3};
    LookaheadState st;
    st.begin(p, std::vector<Token>{1, 2, 3, 4, 5, 9, 1, 6, 7, 8, 9});
    const LookaheadLayout full = st.layout(1, {}, 0, 2, 1 << 20, 64, 100);
    REQUIRE(full.g == 2);
    CHECK(full.branch_len == 4);
    CHECK(full.tokens.size() == 8);
    const LookaheadLayout cut = st.layout(1, {}, 0, 2, 1 << 20, 64, 100, 2);
    REQUIRE(cut.g == 2);
    CHECK(cut.branch_len == 2);
    CHECK(cut.tokens.size() == 4);
    for (size_t b = 0; b < cut.branches.size(); ++b) {
        REQUIRE(cut.branches[b].size() == 2);
        CHECK(std::equal(cut.branches[b].begin(), cut.branches[b].end(), full.branches[b].begin()));
        CHECK(cut.pos[(size_t)cut.branch_first[b] - 1] == 1);
        CHECK(cut.pos[(size_t)cut.branch_first[b]] == 2);
    }
    // A cut branch needs only its own reach: 2 positions after the input.
    CHECK(st.layout(1, {}, 0, 2, 1 << 20, 64, 2, 2).g == 2);
    CHECK(st.layout(1, {}, 0, 2, 1 << 20, 64, 2).empty());
    // Longer than N - 1 is N - 1.
    CHECK(st.layout(1, {}, 0, 2, 1 << 20, 64, 100, 9).branch_len == 4);
}

TEST_CASE("branch gate: runs branches where their context match pays, for as long as they pay",
          "[speculative][lookahead]") {
    const auto linear = [](double r) { return [r](int32_t k) { return r * k; }; };
    BranchGate g;
    // Nothing measured: the first consultation of a match length probes with full branches.
    CHECK(g.length(8, 4, 1, linear(0.1)) == 4);
    // Long matches: whole branches accepted. Short ones: nothing.
    for (int i = 0; i < 6; ++i) {
        g.observe(8, 4, 4);
        g.observe(0, 4, 0);
    }
    CHECK(g.survival(8, 4) == Approx(1.0));
    CHECK(g.survival(0, 1) == Approx(0.0));
    CHECK(g.survival(3, 1) == -1.0);  // never measured
    CHECK(g.length(8, 4, 1, linear(0.1)) == 4);
    // Too costly even when always accepted: 5 tokens for 1 + 4 * 1.2 plain steps.
    CHECK(g.length(8, 4, 1, linear(1.2)) == 0);
    // Three branches cost three times as much.
    CHECK(g.length(8, 4, 3, linear(0.3)) == 4);
    CHECK(g.length(8, 4, 3, linear(0.4)) == 0);
    // Match 0 never pays: probes only, spaced out and paid for by a budget of a few percent of the steps.
    int probes = 0;
    for (int i = 0; i < 2000; ++i)
        if (const int32_t len = g.length(0, 4, 1, linear(0.3)); len > 0) {
            ++probes;
            CHECK(len == 4);
            g.observe(0, len, 0);
        }
    CHECK(probes > 0);
    CHECK(probes * 4 * 0.3 <= 0.03 * 2000 + 16.0 + 1e-9);

    // The first token is usually right, the rest rarely: branches are cut to what pays.
    BranchGate cut;
    for (int i = 0; i < 10; ++i) cut.observe(5, 4, i % 10 == 0 ? 4 : 1);
    CHECK(cut.survival(5, 1) == Approx(1.0));
    CHECK(cut.survival(5, 2) < 0.2);
    CHECK(cut.length(5, 4, 1, linear(0.2)) == 1);
    // A measured cost that jumps after the first token (a new tile of rows) also keeps branches short.
    BranchGate tiles;
    for (int i = 0; i < 10; ++i) tiles.observe(6, 4, 4);
    CHECK(tiles.length(6, 4, 1, [](int32_t k) { return k <= 1 ? 0.1 : 3.0; }) == 1);
    CHECK(tiles.length(6, 4, 1, [](int32_t k) { return k <= 1 ? 0.1 : 0.2; }) == 4);
}

TEST_CASE("n-gram pool: contexts are stored, so n-grams of an earlier text rank by how well they match",
          "[speculative][lookahead]") {
    NgramPool pool;
    pool.reset(2, 4);
    // An earlier text: 3 continues with 4 after "1 2" and with 5 after "7 2".
    pool.add_sequence(std::vector<Token>{1, 2, 3, 4, 7, 2, 3, 5});
    std::vector<int32_t> m;
    // A new text that knows nothing of the earlier one's positions.
    CHECK(pool.best(std::vector<Token>{9, 1, 2, 3}, 2, &m) == std::vector<std::vector<Token>>{{4}, {5}});
    CHECK(m == std::vector<int32_t>{2, 1});
    CHECK(pool.best(std::vector<Token>{7, 2, 3}, 2, &m) == std::vector<std::vector<Token>>{{5}, {4}});
    CHECK(m == std::vector<int32_t>{2, 1});
    // Contexts are at most kMaxMatch tokens; an n-gram added again keeps the longer context.
    std::vector<Token> longer(20);
    for (size_t i = 0; i < longer.size(); ++i) longer[i] = (Token)(40 + i);
    pool.add_sequence(longer);
    CHECK(pool.find(55)[0].n_before == NgramPool::kMaxMatch);
    pool.add(55, std::vector<Token>{56}, std::vector<Token>{54});
    CHECK(pool.find(55)[0].n_before == NgramPool::kMaxMatch);
    const std::vector<Token> ctx(longer.begin(), longer.begin() + 16);
    CHECK(pool.best(ctx, 1, &m) == std::vector<std::vector<Token>>{{56}});
    CHECK(m == std::vector<int32_t>{NgramPool::kMaxMatch});

    // A full key drops its oldest guess (a window n-gram) before any n-gram of the text.
    pool.reset(2, 2);
    pool.add_sequence(std::vector<Token>{5, 6});
    pool.add(5, std::vector<Token>{7}, std::vector<Token>{1});
    pool.add(5, std::vector<Token>{8}, std::vector<Token>{1});
    REQUIRE(pool.find(5).size() == 2);
    CHECK(pool.find(5)[0].rest == std::vector<Token>{8});
    CHECK(pool.find(5)[1].rest == std::vector<Token>{6});
    CHECK(pool.find(5)[1].text);
    pool.add_sequence(std::vector<Token>{5, 9});
    pool.add_sequence(std::vector<Token>{5, 4});  // only text left: the oldest of it goes
    CHECK(pool.find(5)[0].rest == std::vector<Token>{4});
    CHECK(pool.find(5)[1].rest == std::vector<Token>{9});
    CHECK(pool.size() == 2);
}

TEST_CASE("lookahead pool: a slot's next request is drafted from its earlier replies, and stays exact",
          "[speculative][lookahead]") {
    ToyModel m;  // the next token depends on the position too: a reply does not repeat itself
    const std::vector<Token> prompt = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};
    const std::vector<Token> other = {8, 8, 2, 7, 1, 4};
    const LookaheadParams p{4, 5, 4};
    const std::vector<Token> want = plain_loop(m, prompt, 200);
    // Branches alone: what they accept is what the pool knew.
    const LoopResult first = run_loop(m, prompt, p, 0, p.g, 200);
    const LoopResult again_fresh = run_loop(m, prompt, p, 0, p.g, 200);
    REQUIRE(first.out == want);
    REQUIRE(again_fresh.out == want);
    CHECK(again_fresh.accepted == first.accepted);  // a fresh state learns nothing from the first request

    LookaheadState slot;
    const LoopResult r1 = run_loop(m, prompt, p, 0, p.g, 200, 0.0f, 1, 1 << 20, &slot);
    const LoopResult r2 =
        run_loop(m, other, p, 0, p.g, 50, 0.0f, 1, 1 << 20, &slot);  // another request between
    const LoopResult r3 = run_loop(m, prompt, p, 0, p.g, 200, 0.0f, 1, 1 << 20, &slot);
    INFO("first " << r1.accepted << " accepted in " << r1.steps << " steps; again " << r3.accepted << " in "
                  << r3.steps);
    CHECK(r1.out == want);
    CHECK(r2.out == plain_loop(m, other, 50));
    CHECK(r3.out == want);
    CHECK(r1.accepted == first.accepted);
    // The repeated reply is drafted from the slot's memory of it: nearly every step accepts a whole branch.
    CHECK(r3.accepted >= 140);
    CHECK(r3.steps <= 60);
    CHECK(r1.accepted < 40);

    // Different N or G: the pool starts over.
    run_loop(m, other, LookaheadParams{4, 3, 4}, 0, 4, 20, 0.0f, 1, 1 << 20, &slot);
    const LoopResult r4 = run_loop(m, prompt, p, 0, p.g, 200, 0.0f, 1, 1 << 20, &slot);
    CHECK(r4.out == want);
    CHECK(r4.accepted == first.accepted);
}
