// The scheduling policy, as a pure function: slot states and budgets in, a batch plan out.
// Decode tokens are seated first (one per generating slot); prompt chunks of slots in prefill fill
// the rest of n_batch, oldest request first; while decodes are present an optional cap limits the
// prefill share of one iteration (like vLLM's long_prefill_token_threshold).
#pragma once

#include <cstdint>
#include <vector>

namespace sched {

struct SlotView {
    int id = 0;
    bool generating = false;      // has a sampled token waiting to be evaluated
    int32_t prompt_remaining = 0; // prompt tokens not yet in the cache (> 0: in prefill)
    uint64_t arrival = 0;         // request order; lower is older
};

struct Budget {
    uint32_t n_batch = 2048;
    uint32_t max_prefill_tokens = 0;  // 0: no cap
};

struct PlanEntry {
    int slot = 0;
    int32_t n_tokens = 0;
    bool decode = false;          // a generation step (1 token) rather than a prompt chunk
    bool finishes_prompt = false; // the chunk ends the prompt: its last token needs logits
};

struct BatchPlan {
    std::vector<PlanEntry> entries;
    uint32_t n_decode = 0;
    uint32_t n_prefill = 0;
    bool empty() const { return entries.empty(); }
};

BatchPlan plan_iteration(const std::vector<SlotView>& slots, const Budget& budget);

}  // namespace sched
