// The host-memory prompt cache (llama-server's --cache-ram): states of slots' sequences
// (engine::seq_state_bytes) kept in RAM once their slot moves on to an unrelated prompt, so that a later
// prompt that starts the same way is restored into its slot instead of evaluated again.
//
// This is the bookkeeping only, testable without a model: which states are worth keeping, which go first
// when the byte limit is reached (the least recently used), and which one serves a prompt (the longest
// common prefix among those computed with the prompt's LoRA scales). The scheduler's engine thread owns it
// and does the copying (scheduler.cpp: save_to_host, restore_from_host).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <vector>

#include "engine/util/token_data.h"

namespace sched {

// The shortest prefix worth a state: shorter states are not kept, and a state is loaded only when it spares
// at least this many more prompt tokens than the slots' own caches do. Below that, evaluating the tokens
// costs about one micro-batch, while every kept state costs memory and a copy on each save and load.
constexpr size_t kHostCacheMinTokens = 32;

struct HostCacheStats {
    size_t entries = 0;
    size_t bytes = 0;              // held now, entries' tokens and scales included
    uint64_t saves = 0;            // states kept
    uint64_t hits = 0;             // states loaded into a slot
    uint64_t tokens_restored = 0;  // prompt tokens those loads spared
    uint64_t evictions = 0;        // states dropped to stay under the limit (or replaced by a longer one)
};

class HostPromptCache {
  public:
    // limit_bytes < 0: no limit; 0: the cache is off and keeps nothing.
    explicit HostPromptCache(int64_t limit_bytes) : limit_(limit_bytes) {}

    struct Entry {
        std::vector<engine::Token> tokens;  // what the state holds: tokens[i] at position i
        std::vector<float> lora;            // the LoRA scales they were computed with
        std::vector<uint8_t> state;         // engine::seq_state_bytes
        uint64_t last_used = 0;
        size_t bytes() const { return footprint(state.size(), tokens.size(), lora.size()); }
    };
    // What an entry of these sizes counts against the limit.
    static size_t footprint(size_t state_bytes, size_t n_tokens, size_t n_lora) {
        return sizeof(Entry) + state_bytes + n_tokens * sizeof(engine::Token) + n_lora * sizeof(float);
    }

    bool enabled() const { return limit_ != 0; }
    int64_t limit_bytes() const { return limit_; }

    // Whether a state of these tokens (state_bytes long) is worth keeping: enabled, at least
    // kHostCacheMinTokens long, within the limit by itself, and no entry with the same scales already holds
    // them (the same tokens, or these followed by more).
    bool worth_saving(const std::vector<engine::Token>& tokens, const std::vector<float>& lora,
                      size_t state_bytes) const;

    // Keeps a state. Entries with the same scales whose tokens begin it go: it serves every prompt they
    // serve, at least as far. Then the least recently used entries go until the total fits the limit. A
    // state larger than the limit by itself is not kept. Returns whether it was kept.
    bool insert(std::vector<engine::Token> tokens, std::vector<float> lora, std::vector<uint8_t> state);

    struct Match {
        const Entry* entry = nullptr;
        size_t n_prefix = 0;  // prompt tokens the entry holds
    };
    // The entry sharing the longest prefix with the prompt, among those computed with these scales (ties:
    // the most recently used). The prefix stops before the prompt's last token, which is always evaluated
    // (its logits start the generation). No entry: {nullptr, 0}.
    Match find(const std::vector<engine::Token>& prompt, const std::vector<float>& lora) const;

    // A match was loaded into a slot: its entry becomes the most recently used; n_prefix counts as restored.
    void record_hit(const Match& m);

    const HostCacheStats& stats() const { return stats_; }
    // Drops every entry (a sleeping server gives its memory back); returns the bytes dropped.
    size_t clear();

  private:
    void evict_until_fits();

    int64_t limit_;
    std::list<Entry> entries_;  // stable addresses: a Match points into it
    uint64_t clock_ = 0;
    HostCacheStats stats_;
};

}  // namespace sched
