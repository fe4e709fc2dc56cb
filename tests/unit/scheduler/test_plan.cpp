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

TEST_CASE("decode tokens beyond n_batch wait; nothing to do gives an empty plan", "[scheduler][plan]") {
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
