#include "server/scheduler/plan.h"

#include <algorithm>

namespace sched {

BatchPlan plan_iteration(const std::vector<SlotView>& slots, const Budget& budget) {
    BatchPlan plan;
    uint32_t used = 0;
    // (1) decode goes first: one token per generating slot.
    for (const SlotView& s : slots) {
        if (!s.generating || used >= budget.n_batch) continue;
        plan.entries.push_back({s.id, 1, true, false});
        ++used;
        ++plan.n_decode;
    }
    // (2) prompt chunks fill the rest, oldest request first; (3) capped while decodes are present.
    uint32_t prefill_budget = budget.n_batch - used;
    if (plan.n_decode > 0 && budget.max_prefill_tokens > 0)
        prefill_budget = std::min(prefill_budget, budget.max_prefill_tokens);
    std::vector<const SlotView*> prefill;
    for (const SlotView& s : slots)
        if (!s.generating && s.prompt_remaining > 0) prefill.push_back(&s);
    std::stable_sort(prefill.begin(), prefill.end(),
                     [](const SlotView* a, const SlotView* b) { return a->arrival < b->arrival; });
    for (const SlotView* s : prefill) {
        if (prefill_budget == 0) break;
        const int32_t n = (int32_t)std::min<uint32_t>(prefill_budget, (uint32_t)s->prompt_remaining);
        plan.entries.push_back({s->id, n, false, n == s->prompt_remaining});
        prefill_budget -= (uint32_t)n;
        plan.n_prefill += (uint32_t)n;
    }
    return plan;
}

}  // namespace sched
