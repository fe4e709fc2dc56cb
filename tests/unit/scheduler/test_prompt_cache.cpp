// Prompt caching policy: which idle slot serves a prompt and how much of the prompt is reused.
#include <catch2/catch.hpp>

#include "server/scheduler/prompt_cache.h"

using namespace sched;
using Tokens = std::vector<engine::Token>;

TEST_CASE("common_prefix", "[scheduler][prompt_cache]") {
    REQUIRE(common_prefix({}, {1, 2}) == 0);
    REQUIRE(common_prefix({1, 2, 3}, {1, 2, 4}) == 2);
    REQUIRE(common_prefix({1, 2}, {1, 2, 3}) == 2);
    REQUIRE(common_prefix({5}, {1}) == 0);
}

TEST_CASE("slot choice prefers the longest cached prefix, then an empty slot, then the least recently used",
          "[scheduler][prompt_cache]") {
    const Tokens a{1, 10, 11, 12, 13}, b{1, 20, 21}, empty;
    std::vector<SlotCacheView> slots{
        {0, true, &b, 5}, {1, true, &a, 9}, {2, true, &empty, 1}, {3, true, &b, 2}};
    REQUIRE(choose_slot(slots, {1, 10, 11, 99}, true, -1, 0.1f) == 1);  // longest prefix
    REQUIRE(choose_slot(slots, {1, 20, 21, 22}, true, -1, 0.1f) == 3);  // tie: the less recently used
    REQUIRE(choose_slot(slots, {2, 3}, true, -1, 0.1f) == 2);  // no match: keep the caches, use the empty slot
    slots[1].idle = false;
    REQUIRE(choose_slot(slots, {1, 10, 11, 99}, true, -1, 0.1f) == 3);  // BOS matches everywhere; LRU among them
    REQUIRE(choose_slot(slots, {1, 10, 11, 99}, true, 1, 0.1f) == -1);  // the requested slot is busy
    REQUIRE(choose_slot(slots, {1, 10, 11, 99}, true, 0, 0.1f) == 0);
    slots[2].cache = &a;  // without prompt caching: least recently used
    REQUIRE(choose_slot(slots, {1, 10}, false, -1, 0.1f) == 2);
    for (auto& s : slots) s.idle = false;
    REQUIRE(choose_slot(slots, {1}, true, -1, 0.1f) == -1);
}

TEST_CASE("slot choice by prompt similarity follows -sps", "[scheduler][prompt_cache]") {
    const Tokens a{1, 10, 11, 12, 13, 14, 15, 16, 17, 18}, empty;
    std::vector<SlotCacheView> slots{{0, true, &a, 9}, {1, true, &empty, 1}};
    const Tokens p{1, 10, 11, 50, 51, 52, 53, 54, 55, 56};  // 3 of 10 tokens in common: similarity 0.3
    REQUIRE(choose_slot(slots, p, true, -1, 0.1f) == 0);   // above the threshold: the cached slot
    REQUIRE(choose_slot(slots, p, true, -1, 0.5f) == 1);   // below it: the empty slot, the cache survives
    REQUIRE(choose_slot(slots, p, true, -1, 0.0f) == 1);   // 0: never by prompt
    REQUIRE(choose_slot(slots, p, true, -1, 0.3f) == 1);   // the fraction must exceed the threshold
}

TEST_CASE("prefix reuse takes the slot's own cache or a longer prefix another slot holds",
          "[scheduler][prompt_cache]") {
    const Tokens sys{1, 7, 7, 7, 7, 7, 8}, mine{1, 7, 7, 3}, empty;
    std::vector<SlotCacheView> slots{{0, true, &mine, 0}, {1, false, &sys, 0}, {2, true, &empty, 0}};
    // Slot 0 holds 3 matching tokens, busy slot 1 holds 6: share slot 1's.
    auto r = plan_prefix_reuse(slots, 0, {1, 7, 7, 7, 7, 7, 9, 9});
    REQUIRE(r.donor == 1);
    REQUIRE(r.n_reuse == 6);
    // The own cache wins ties.
    r = plan_prefix_reuse(slots, 0, {1, 7, 7, 3, 4});
    REQUIRE(r.donor == -1);
    REQUIRE(r.n_reuse == 4);
    // At least the last prompt token is evaluated, even when the whole prompt is cached.
    r = plan_prefix_reuse(slots, 2, sys);
    REQUIRE(r.donor == 1);
    REQUIRE(r.n_reuse == (int32_t)sys.size() - 1);
    r = plan_prefix_reuse(slots, 2, {4, 5});
    REQUIRE(r.donor == -1);
    REQUIRE(r.n_reuse == 0);
}

TEST_CASE("a cached prefix computed with other LoRA scales is not reused", "[scheduler][prompt_cache][lora]") {
    const Tokens a{1, 10, 11, 12, 13}, empty;
    const std::vector<float> none{0.0f, 0.0f}, with_a{1.0f, 0.0f};
    std::vector<SlotCacheView> slots{{0, true, &a, 5, &with_a}, {1, true, &empty, 1, &none}, {2, true, &a, 2, &none}};
    REQUIRE(reusable_prefix(slots[0], {1, 10, 11, 99}, with_a) == 3);
    REQUIRE(reusable_prefix(slots[0], {1, 10, 11, 99}, none) == 0);
    REQUIRE(choose_slot(slots, {1, 10, 11, 99}, true, -1, 0.1f, with_a) == 0);
    REQUIRE(choose_slot(slots, {1, 10, 11, 99}, true, -1, 0.1f, none) == 2);
    // Slot 1 serves a prompt without adapters: slot 2's prefix is shared, slot 0's (with adapters) is not.
    PrefixReuse r = plan_prefix_reuse(slots, 1, {1, 10, 11, 12, 99}, none);
    REQUIRE(r.donor == 2);
    REQUIRE(r.n_reuse == 4);
    slots[2].lora = &with_a;
    r = plan_prefix_reuse(slots, 1, {1, 10, 11, 12, 99}, none);
    REQUIRE(r.donor == -1);
    REQUIRE(r.n_reuse == 0);
    // Its own cache, computed with other scales, is not kept either.
    r = plan_prefix_reuse(slots, 0, {1, 10, 11, 12, 99}, none);
    REQUIRE(r.n_reuse == 0);
}
