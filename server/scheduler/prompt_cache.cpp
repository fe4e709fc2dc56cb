#include "server/scheduler/prompt_cache.h"

#include <algorithm>

namespace sched {

size_t common_prefix(const std::vector<engine::Token>& a, const std::vector<engine::Token>& b) {
    const size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

size_t reusable_prefix(const SlotCacheView& slot, const std::vector<engine::Token>& prompt,
                       const std::vector<float>& lora) {
    static const std::vector<float> none;
    if ((slot.lora ? *slot.lora : none) != lora) return 0;
    return common_prefix(*slot.cache, prompt);
}

int choose_slot(const std::vector<SlotCacheView>& slots, const std::vector<engine::Token>& prompt,
                bool cache_prompt, int requested, float min_similarity, const std::vector<float>& lora) {
    const bool by_prompt = cache_prompt && min_similarity > 0.0f && !prompt.empty();
    const auto similar = [&](size_t prefix) { return (float)prefix / (float)prompt.size() > min_similarity; };
    int best = -1;
    size_t best_prefix = 0;
    bool best_empty = false;
    uint64_t best_used = 0;
    for (const SlotCacheView& s : slots) {
        if (!s.idle || (requested >= 0 && s.id != requested)) continue;
        size_t prefix = by_prompt ? reusable_prefix(s, prompt, lora) : 0;
        if (!similar(prefix)) prefix = 0;  // too little in common: as if nothing matched
        const bool empty = s.cache->empty();
        bool better;
        if (best < 0)
            better = true;
        else if (prefix != best_prefix)
            better = prefix > best_prefix;
        else if (empty != best_empty)
            better = empty;
        else
            better = s.last_used < best_used;
        if (better) {
            best = s.id;
            best_prefix = prefix;
            best_empty = empty;
            best_used = s.last_used;
        }
    }
    return best;
}

PrefixReuse plan_prefix_reuse(const std::vector<SlotCacheView>& slots, int slot,
                              const std::vector<engine::Token>& prompt, const std::vector<float>& lora) {
    PrefixReuse r;
    size_t own = 0, best = 0;
    for (const SlotCacheView& s : slots) {
        const size_t n = reusable_prefix(s, prompt, lora);
        if (s.id == slot)
            own = n;
        else if (n > best) {
            best = n;
            r.donor = s.id;
        }
    }
    const size_t cap = prompt.empty() ? 0 : prompt.size() - 1;
    own = std::min(own, cap);
    best = std::min(best, cap);
    if (best > own) {
        r.n_reuse = (int32_t)best;
    } else {
        r.donor = -1;
        r.n_reuse = (int32_t)own;
    }
    return r;
}

}  // namespace sched
