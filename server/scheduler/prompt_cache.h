// Prompt caching policy (pure functions, testable without a model): which idle slot serves a prompt,
// and how much of the prompt is already in the KV cache, in the slot's own sequence or in another
// slot's (shared by seq_cp instead of being evaluated again).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/util/token_data.h"

namespace sched {

size_t common_prefix(const std::vector<engine::Token>& a, const std::vector<engine::Token>& b);

struct SlotCacheView {
    int id = 0;
    bool idle = true;
    const std::vector<engine::Token>* cache = nullptr;  // tokens the slot's sequence holds
    uint64_t last_used = 0;                             // higher: used more recently
    // The LoRA scales the cached tokens were computed with (nullptr: none, as an empty vector): a prefix
    // is reusable only by a prompt with the same scales.
    const std::vector<float>* lora = nullptr;
};

// How much of the prompt (computed with these LoRA scales) the slot's cache holds.
size_t reusable_prefix(const SlotCacheView& slot, const std::vector<engine::Token>& prompt,
                       const std::vector<float>& lora);

// The idle slot for a prompt (requested >= 0: only that one), or -1 if none is idle. With cache_prompt
// and min_similarity > 0 (llama-server's -sps): the slot whose cache shares the longest prefix with the
// prompt (computed with the same LoRA scales), if that prefix is more than min_similarity of the prompt
// (ties: the less recently used); otherwise an empty slot, then the least recently used, so that useful
// caches survive.
int choose_slot(const std::vector<SlotCacheView>& slots, const std::vector<engine::Token>& prompt,
                bool cache_prompt, int requested, float min_similarity, const std::vector<float>& lora = {});

struct PrefixReuse {
    int donor = -1;       // another slot whose prefix is copied (seq_cp); -1: the slot's own cache
    int32_t n_reuse = 0;  // prompt tokens not evaluated again
};

// At least the last prompt token is evaluated: its logits start the generation.
PrefixReuse plan_prefix_reuse(const std::vector<SlotCacheView>& slots, int slot,
                              const std::vector<engine::Token>& prompt, const std::vector<float>& lora = {});

}  // namespace sched
