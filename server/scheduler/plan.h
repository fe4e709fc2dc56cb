// The scheduling policy, as a pure function: slot states and budgets in, a batch plan out.
// Decode steps are seated first: every generating slot gets its pending token. Prompt chunks of slots
// in prefill come next, oldest request first; while decodes are present an optional cap limits the
// prefill share of one iteration (like vLLM's long_prefill_token_threshold). Extra decode tokens that a
// slot asks for (a speculative draft, a lookahead window) count against n_batch too: they get what is
// left once prefill has its share (up to the cap), so a draft shrinks, down to nothing, before a
// prompt starves. When drafts compete, the budget is split evenly (water-filling).
#pragma once

#include <cstdint>
#include <vector>

namespace sched {

struct SlotView {
    int id = 0;
    bool generating = false;      // has a sampled token waiting to be evaluated
    int32_t prompt_remaining = 0; // prompt tokens not yet in the cache (> 0: in prefill)
    uint64_t arrival = 0;         // request order; lower is older
    int32_t n_draft = 0;          // generating: extra tokens wanted after the pending one
};

struct Budget {
    uint32_t n_batch = 2048;
    uint32_t max_prefill_tokens = 0;  // 0: no cap
};

struct PlanEntry {
    int slot = 0;
    int32_t n_tokens = 0;
    bool decode = false;          // a generation step: the pending token plus n_draft extra tokens
    bool finishes_prompt = false; // the chunk ends the prompt: its last token needs logits
    int32_t n_draft = 0;          // decode: extra tokens granted (n_tokens = 1 + n_draft)
    int32_t n_logits = 0;         // the last n_logits tokens of the entry need logits
};

struct BatchPlan {
    std::vector<PlanEntry> entries;  // decode steps first, then prompt chunks
    uint32_t n_decode = 0;           // generating slots seated (one pending token each)
    uint32_t n_draft = 0;            // extra decode tokens seated
    uint32_t n_prefill = 0;          // prompt tokens seated
    bool empty() const { return entries.empty(); }
    uint32_t n_tokens() const { return n_decode + n_draft + n_prefill; }
};

BatchPlan plan_iteration(const std::vector<SlotView>& slots, const Budget& budget);

// Splits `budget` among wants: everyone gets min(want, fair share), the unused shares of small wants
// going to the larger ones. Deterministic; the result never exceeds a want or the budget in total.
std::vector<int32_t> share_budget(const std::vector<int32_t>& wants, uint32_t budget);

}  // namespace sched
