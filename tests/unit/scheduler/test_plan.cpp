// The scheduling policy and stop strings, without a model.
#include <catch2/catch.hpp>

#include "server/scheduler/plan.h"
#include "server/scheduler/stop_strings.h"

using namespace sched;

TEST_CASE("decode tokens are seated first, prompt chunks fill the rest of n_batch", "[scheduler][plan]") {
    std::vector<SlotView> slots = {{0, true, 0, 1}, {1, false, 100, 5}, {2, true, 0, 2}, {3, false, 30, 4}};
    const BatchPlan p = plan_iteration(slots, {64, 0});
    REQUIRE(p.n_decode == 2);
    REQUIRE(p.n_prefill == 62);
    REQUIRE(p.entries[0].slot == 0);
    REQUIRE(p.entries[0].decode);
    REQUIRE(p.entries[1].slot == 2);
    // oldest prefill first (slot 3 arrived before slot 1), the whole 30-token prompt then 32 of slot 1
    REQUIRE(p.entries[2].slot == 3);
    REQUIRE(p.entries[2].n_tokens == 30);
    REQUIRE(p.entries[2].finishes_prompt);
    REQUIRE(p.entries[3].slot == 1);
    REQUIRE(p.entries[3].n_tokens == 32);
    REQUIRE_FALSE(p.entries[3].finishes_prompt);
}

TEST_CASE("the prefill cap applies only while decode tokens are present", "[scheduler][plan]") {
    std::vector<SlotView> with_decode = {{0, true, 0, 1}, {1, false, 400, 2}};
    BatchPlan p = plan_iteration(with_decode, {64, 16});
    REQUIRE(p.n_decode == 1);
    REQUIRE(p.n_prefill == 16);
    std::vector<SlotView> only_prefill = {{1, false, 400, 2}};
    p = plan_iteration(only_prefill, {64, 16});
    REQUIRE(p.n_prefill == 64);
}

TEST_CASE("a long prompt resumes over several iterations", "[scheduler][plan]") {
    int32_t remaining = 150;
    int iterations = 0;
    while (remaining > 0) {
        std::vector<SlotView> s = {{0, true, 0, 1}, {1, false, remaining, 2}};
        const BatchPlan p = plan_iteration(s, {64, 16});
        REQUIRE(p.n_decode == 1);  // the generating slot is never starved
        remaining -= (int32_t)p.n_prefill;
        ++iterations;
    }
    REQUIRE(iterations == 10);  // ceil(150 / 16)
}

TEST_CASE("decode tokens beyond n_batch wait, nothing to do gives an empty plan", "[scheduler][plan]") {
    std::vector<SlotView> s;
    for (int i = 0; i < 5; ++i) s.push_back({i, true, 0, (uint64_t)i});
    BatchPlan p = plan_iteration(s, {3, 0});
    REQUIRE(p.n_decode == 3);
    REQUIRE(plan_iteration({}, {64, 0}).empty());
}

TEST_CASE("stop strings are held back, never split, never emitted", "[scheduler][stop]") {
    StopMatcher m({"\n\n", "END"});
    std::string shown;
    auto r = m.push("Hello E");
    shown += r.emit;
    REQUIRE(shown == "Hello ");  // "E" could start "END"
    r = m.push("x");
    shown += r.emit;
    REQUIRE(shown == "Hello Ex");
    r = m.push(" and EN");
    shown += r.emit;
    REQUIRE_FALSE(r.stopped);
    r = m.push("D tail");
    shown += r.emit;
    REQUIRE(r.stopped);
    REQUIRE(r.word == "END");
    REQUIRE(shown == "Hello Ex and ");
}

TEST_CASE("held-back text is released at the end when no stop string completes", "[scheduler][stop]") {
    StopMatcher m({"</s>"});
    auto r = m.push("abc</");
    REQUIRE(r.emit == "abc");
    REQUIRE(m.flush() == "</");
    StopMatcher none({});
    REQUIRE(none.push("x</").emit == "x</");
}

// Multi-token decode steps: a slot's draft (or lookahead window) rides with its pending token.

TEST_CASE("a decode entry carries the pending token and its draft, all needing logits", "[scheduler][plan]") {
    std::vector<SlotView> s = {{0, true, 0, 1, 5}, {1, true, 0, 2, 0}};
    const BatchPlan p = plan_iteration(s, {64, 0});
    REQUIRE(p.entries.size() == 2);
    REQUIRE(p.entries[0].decode);
    REQUIRE(p.entries[0].n_tokens == 6);
    REQUIRE(p.entries[0].n_draft == 5);
    REQUIRE(p.entries[0].n_logits == 6);
    REQUIRE(p.entries[1].n_tokens == 1);
    REQUIRE(p.entries[1].n_logits == 1);
    REQUIRE(p.n_decode == 2);
    REQUIRE(p.n_draft == 5);
    REQUIRE(p.n_tokens() == 7);
}

TEST_CASE("prompt chunks: only the chunk that ends the prompt asks for a logits row", "[scheduler][plan]") {
    std::vector<SlotView> s = {{0, false, 100, 1}, {1, false, 10, 2}};
    const BatchPlan p = plan_iteration(s, {64, 0});
    REQUIRE(p.entries[0].n_tokens == 64);
    REQUIRE(p.entries[0].n_logits == 0);
    // the second prompt does not fit at all this time
    REQUIRE(p.entries.size() == 1);
    const BatchPlan q = plan_iteration({{1, false, 10, 2}}, {64, 0});
    REQUIRE(q.entries[0].n_logits == 1);
    REQUIRE(q.entries[0].finishes_prompt);
}

TEST_CASE("drafts count against n_batch and are split evenly when they do not all fit", "[scheduler][plan]") {
    std::vector<SlotView> s = {{0, true, 0, 1, 16}, {1, true, 0, 2, 16}, {2, true, 0, 3, 2}};
    const BatchPlan p = plan_iteration(s, {24, 0});
    // 3 pending tokens, 21 left: the small draft takes its 2, the two others 9 and 10 (never more than n_batch)
    REQUIRE(p.n_tokens() == 24);
    REQUIRE(p.entries[2].n_draft == 2);
    REQUIRE(p.entries[0].n_draft + p.entries[1].n_draft == 19);
    REQUIRE(std::abs(p.entries[0].n_draft - p.entries[1].n_draft) <= 1);
    for (const auto& e : p.entries) REQUIRE(e.n_tokens == 1 + e.n_draft);
}

TEST_CASE("a draft shrinks before a prompt starves: prefill keeps its capped share", "[scheduler][plan]") {
    std::vector<SlotView> s = {{0, true, 0, 1, 16}, {1, true, 0, 2, 16}, {2, false, 400, 3}};
    // With a cap of 16 the prompt is owed 16 of the 30 tokens left: the drafts share 14.
    BatchPlan p = plan_iteration(s, {32, 16});
    REQUIRE(p.n_prefill == 16);
    REQUIRE(p.n_draft == 14);
    REQUIRE(p.entries[0].n_draft == 7);
    // Without a cap the prompt is owed everything: no drafts while it is prefilled.
    p = plan_iteration(s, {32, 0});
    REQUIRE(p.n_prefill == 30);
    REQUIRE(p.n_draft == 0);
    REQUIRE(p.n_decode == 2);  // decode still goes first
    // A short prompt is owed only what it needs; the drafts get the rest.
    s[2].prompt_remaining = 4;
    p = plan_iteration(s, {32, 16});
    REQUIRE(p.n_prefill == 4);
    REQUIRE(p.n_draft == 26);
}

TEST_CASE("share_budget: never more than wanted or budgeted, leftovers go to larger wants", "[scheduler][plan]") {
    REQUIRE(share_budget({3, 10, 10}, 100) == std::vector<int32_t>{3, 10, 10});
    REQUIRE(share_budget({3, 10, 10}, 13) == std::vector<int32_t>{3, 5, 5});
    REQUIRE(share_budget({0, 7}, 5) == std::vector<int32_t>{0, 5});
    REQUIRE(share_budget({4, 4, 4}, 0) == std::vector<int32_t>{0, 0, 0});
    REQUIRE(share_budget({}, 10).empty());
    // exhaustive small cases: the sum is min(budget, sum of wants), every share <= its want
    for (int32_t a = 0; a < 6; ++a)
        for (int32_t b = 0; b < 6; ++b)
            for (uint32_t budget = 0; budget < 12; ++budget) {
                const auto g = share_budget({a, b}, budget);
                REQUIRE(g[0] <= a);
                REQUIRE(g[1] <= b);
                REQUIRE((uint32_t)(g[0] + g[1]) == std::min<uint32_t>(budget, (uint32_t)(a + b)));
            }
}
