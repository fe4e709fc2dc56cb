#include "server/scheduler/plan.h"

#include <algorithm>
#include <numeric>

namespace sched {

std::vector<int32_t> share_budget(const std::vector<int32_t>& wants, uint32_t budget) {
    std::vector<int32_t> got(wants.size(), 0);
    std::vector<size_t> order(wants.size());
    std::iota(order.begin(), order.end(), 0);
    // Smallest wants first, ties by index: each takes at most an even share of what is left.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return wants[a] < wants[b]; });
    uint64_t left = budget;
    for (size_t k = 0; k < order.size(); ++k) {
        const size_t i = order[k];
        const uint64_t share = left / (order.size() - k);
        const uint64_t give = std::min<uint64_t>((uint64_t)std::max(wants[i], 0), share);
        got[i] = (int32_t)give;
        left -= give;
    }
    return got;
}

BatchPlan plan_iteration(const std::vector<SlotView>& slots, const Budget& budget) {
    BatchPlan plan;
    uint32_t used = 0;
    // (1) decode goes first: the pending token of every generating slot.
    std::vector<const SlotView*> decoding;
    for (const SlotView& s : slots) {
        if (!s.generating || used >= budget.n_batch) continue;
        decoding.push_back(&s);
        ++used;
    }
    plan.n_decode = (uint32_t)decoding.size();

    // (2) prompt chunks are owed the rest of n_batch, (3) capped while decodes are present.
    std::vector<const SlotView*> prefill;
    uint64_t prefill_demand = 0;
    for (const SlotView& s : slots)
        if (!s.generating && s.prompt_remaining > 0) {
            prefill.push_back(&s);
            prefill_demand += (uint64_t)s.prompt_remaining;
        }
    const uint32_t rest = budget.n_batch - used;
    uint32_t prefill_cap = rest;
    if (plan.n_decode > 0 && budget.max_prefill_tokens > 0) prefill_cap = std::min(rest, budget.max_prefill_tokens);
    const uint32_t prefill_owed = (uint32_t)std::min<uint64_t>(prefill_cap, prefill_demand);

    // (4) drafts take what prefill is not owed, shared evenly.
    std::vector<int32_t> wants;
    for (const SlotView* s : decoding) wants.push_back(std::max(s->n_draft, 0));
    const std::vector<int32_t> drafts = share_budget(wants, rest - prefill_owed);
    for (size_t k = 0; k < decoding.size(); ++k) {
        const int32_t n = 1 + drafts[k];
        plan.entries.push_back({decoding[k]->id, n, true, false, drafts[k], n});
        plan.n_draft += (uint32_t)drafts[k];
    }

    std::stable_sort(prefill.begin(), prefill.end(),
                     [](const SlotView* a, const SlotView* b) { return a->arrival < b->arrival; });
    uint32_t prefill_budget = std::min(prefill_cap, rest - plan.n_draft);
    for (const SlotView* s : prefill) {
        if (prefill_budget == 0) break;
        const int32_t n = (int32_t)std::min<uint32_t>(prefill_budget, (uint32_t)s->prompt_remaining);
        const bool finishes = n == s->prompt_remaining;
        plan.entries.push_back({s->id, n, false, finishes, 0, finishes ? 1 : 0});
        prefill_budget -= (uint32_t)n;
        plan.n_prefill += (uint32_t)n;
    }
    return plan;
}

}  // namespace sched
