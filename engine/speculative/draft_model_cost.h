// What a draft model's drafts cost, learned from its calls: seconds per drafted position, per call (the
// short catch-up that comes with drafting: a draft accepted whole leaves its last token unevaluated by the
// draft model, and steps decoded without a draft leave theirs), and per token it catches up on after a
// long pause (a new prompt). The scheduler prices drafts with these, in shares of a plain target step.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/speculative/draft_controller.h"

namespace engine::spec {

class DraftModelCost {
  public:
    // One draft call for n_slots slots: catch_up_seconds spent on catch_up_tokens tokens (all slots
    // together), then draft_seconds on `positions` drafted positions. The first call is not timed: it
    // may page the weights in (--no-warmup) or meet cold caches.
    void observe(int32_t n_slots, int32_t catch_up_tokens, double catch_up_seconds, int32_t positions,
                 double draft_seconds);
    // The next call is not timed either: the weights come back from disk after the server slept.
    void skip_next_call() { skip_next_ = true; }
    double position_seconds() const { return position_; }  // 0 until timed
    double call_seconds() const { return call_; }
    // Per token caught up: the fitted slope, never above a drafted position (a batch of catch-up tokens
    // is cheaper than positions drafted one at a time); 0 until fitted.
    double per_token_seconds() const;
    // What a draft for a slot costs besides its positions, when the draft model is `behind` tokens behind
    // the slot's context and the reply may still ask for `left` tokens: the cost per call, and a catch-up
    // longer than kSteadyCatchUp, which drafting from now on pays once, spread over `left` (so that it is
    // paid early in a reply and not for its last few tokens).
    double fixed_seconds(size_t behind, int32_t left) const;
    // The same for a probe (a draft the evidence does not justify): it usually fails and leaves drafting
    // off, so its catch-up is its own, not spread over drafts to come. Until catch-ups have been timed, a
    // token caught up is priced as a drafted position (an upper bound: catch-up tokens go in one batch).
    double probe_seconds(size_t behind) const;

    // At most this many tokens per slot make a call's catch-up part of drafting's cost per call; a longer
    // one is a new prompt's prefill, paid once. Tried: counting only calls of at most one token a slot
    // (drafting every step), so that drafting now and then does not look dearer: four streams then
    // drafted more and lost (0.93-0.94x plain in one run of the TinyLlama-shaped pair) with no gain on one.
    static constexpr int32_t kSteadyCatchUp = 8;

  private:
    bool skip_next_ = true;  // the first call
    double position_ = 0, call_ = 0;
    CatchUpCost catch_up_;
};

}  // namespace engine::spec
