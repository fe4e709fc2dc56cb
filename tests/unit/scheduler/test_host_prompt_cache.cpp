// The host-memory prompt cache's bookkeeping (--cache-ram): what is worth keeping, LRU eviction under the
// byte limit, lookup by longest prefix, and LoRA scales as part of the key.
#include <catch2/catch.hpp>

#include <numeric>

#include "server/scheduler/host_prompt_cache.h"

using namespace sched;
using Tokens = std::vector<engine::Token>;

namespace {

// n tokens starting at `first` (first, first+1, ...).
Tokens run(engine::Token first, size_t n) {
    Tokens t(n);
    std::iota(t.begin(), t.end(), first);
    return t;
}

Tokens join(Tokens a, const Tokens& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::vector<uint8_t> state(size_t n, uint8_t fill = 7) {
    return std::vector<uint8_t>(n, fill);
}

const std::vector<float> kNoLora{};

}  // namespace

TEST_CASE("host cache: off with limit 0, short states are not worth keeping", "[scheduler][host_cache]") {
    HostPromptCache off(0);
    REQUIRE_FALSE(off.enabled());
    REQUIRE_FALSE(off.worth_saving(run(0, 100), kNoLora, 10));
    REQUIRE_FALSE(off.insert(run(0, 100), kNoLora, state(10)));
    REQUIRE(off.stats().entries == 0);
    REQUIRE(off.find(run(0, 100), kNoLora).entry == nullptr);

    HostPromptCache c(-1);  // no limit
    REQUIRE(c.enabled());
    REQUIRE_FALSE(c.worth_saving(run(0, kHostCacheMinTokens - 1), kNoLora, 10));
    REQUIRE(c.worth_saving(run(0, kHostCacheMinTokens), kNoLora, 10));
}

TEST_CASE("host cache: the longest common prefix wins, capped before the prompt's last token",
          "[scheduler][host_cache]") {
    HostPromptCache c(-1);
    const Tokens a = run(0, 64), b = join(run(0, 40), run(1000, 40)), other = run(500, 50);
    REQUIRE(c.insert(a, kNoLora, state(100, 1)));
    REQUIRE(c.insert(b, kNoLora, state(100, 2)));
    REQUIRE(c.insert(other, kNoLora, state(100, 3)));
    REQUIRE(c.stats().entries == 3);

    // a's 64 tokens then more: a serves 64.
    auto m = c.find(join(a, run(2000, 10)), kNoLora);
    REQUIRE(m.entry != nullptr);
    REQUIRE(m.entry->state[0] == 1);
    REQUIRE(m.n_prefix == 64);
    // b's first 60 tokens, then something else: b serves 60 (a only 40).
    m = c.find(join(Tokens(b.begin(), b.begin() + 60), run(3000, 5)), kNoLora);
    REQUIRE(m.entry->state[0] == 2);
    REQUIRE(m.n_prefix == 60);
    // Exactly a: the last token is evaluated again.
    m = c.find(a, kNoLora);
    REQUIRE(m.entry->state[0] == 1);
    REQUIRE(m.n_prefix == 63);
    // Nothing in common.
    m = c.find(run(9000, 50), kNoLora);
    REQUIRE(m.entry == nullptr);
    REQUIRE(m.n_prefix == 0);
    REQUIRE(c.find({}, kNoLora).entry == nullptr);

    c.record_hit(c.find(a, kNoLora));
    REQUIRE(c.stats().hits == 1);
    REQUIRE(c.stats().tokens_restored == 63);
}

TEST_CASE("host cache: a state already covered is not kept twice, a longer one replaces its prefixes",
          "[scheduler][host_cache]") {
    HostPromptCache c(-1);
    const Tokens longer = run(0, 80), shorter = run(0, 50);
    REQUIRE(c.insert(shorter, kNoLora, state(100)));
    REQUIRE(c.worth_saving(longer, kNoLora, 200));
    REQUIRE(c.insert(longer, kNoLora, state(200)));
    REQUIRE(c.stats().entries == 1);  // the 50-token state is a prefix of the 80-token one
    REQUIRE(c.stats().evictions == 1);
    REQUIRE_FALSE(c.worth_saving(shorter, kNoLora, 100));
    REQUIRE_FALSE(c.worth_saving(longer, kNoLora, 200));
    REQUIRE(c.find(join(shorter, run(5000, 3)), kNoLora).entry->tokens == longer);
}

TEST_CASE("host cache: entries computed with other LoRA scales are neither matched nor replaced",
          "[scheduler][host_cache]") {
    HostPromptCache c(-1);
    const std::vector<float> off{0.0f}, on{1.0f};
    const Tokens p = run(0, 60);
    REQUIRE(c.insert(p, on, state(100, 1)));
    REQUIRE(c.find(join(p, run(900, 4)), off).entry == nullptr);
    REQUIRE(c.find(join(p, run(900, 4)), on).entry->state[0] == 1);
    REQUIRE(c.worth_saving(p, off, 100));  // the same tokens without the adapter are another state
    REQUIRE(c.insert(p, off, state(100, 2)));
    REQUIRE(c.stats().entries == 2);
    REQUIRE(c.find(join(p, run(900, 4)), off).entry->state[0] == 2);
    REQUIRE(c.find(join(p, run(900, 4)), on).entry->state[0] == 1);
}

TEST_CASE("host cache: the least recently used entries go to stay under the limit", "[scheduler][host_cache]") {
    const Tokens a = run(0, 40), b = run(100, 40), d = run(200, 40);
    const size_t one = HostPromptCache::Entry{a, kNoLora, state(1000), 0}.bytes();
    HostPromptCache c((int64_t)(2 * one + one / 2));  // room for two entries
    REQUIRE(c.insert(a, kNoLora, state(1000)));
    REQUIRE(c.insert(b, kNoLora, state(1000)));
    REQUIRE(c.stats().entries == 2);
    REQUIRE(c.stats().bytes == 2 * one);
    // a is used again, so b is now the least recently used.
    c.record_hit(c.find(join(a, run(7000, 2)), kNoLora));
    REQUIRE(c.insert(d, kNoLora, state(1000)));
    REQUIRE(c.stats().entries == 2);
    REQUIRE(c.stats().evictions == 1);
    REQUIRE(c.stats().bytes <= (size_t)c.limit_bytes());
    REQUIRE(c.find(join(b, run(7000, 2)), kNoLora).entry == nullptr);
    REQUIRE(c.find(join(a, run(7000, 2)), kNoLora).entry != nullptr);
    REQUIRE(c.find(join(d, run(7000, 2)), kNoLora).entry != nullptr);

    // A state larger than the whole limit is not worth making, not kept, and nothing is evicted for it.
    REQUIRE(c.worth_saving(run(300, 40), kNoLora, 1000));
    REQUIRE_FALSE(c.worth_saving(run(300, 40), kNoLora, 3 * one));
    REQUIRE_FALSE(c.insert(run(300, 40), kNoLora, state(3 * one)));
    REQUIRE(c.stats().entries == 2);
    REQUIRE(c.stats().saves == 3);
}
