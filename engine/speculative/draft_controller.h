// How long a draft to ask for, so that speculation never costs more than it gains. Each slot keeps an
// estimate of the chance that a draft token is accepted (from its own recent steps); the scheduler keeps a
// cost model of a target step (a fixed part plus a part per token, fitted to measured decode times). The
// draft length maximizes expected tokens per unit of time; when no length beats plain decoding, the slot
// decodes plainly and only probes with a short draft now and then (less often while probes fail, and
// rarely, ever more rarely, when the drafter is too slow to pay at any acceptance).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

namespace engine::spec {

// y = a + b x, fitted by exponentially weighted least squares (the step and catch-up costs below).
struct EwLineFit {
    double w = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;  // decayed sums
    void add(double x, double y, double decay);
    // w * sum(x^2) - sum(x)^2: how far the x seen differ; the slope means something once it is large
    // enough relative to w^2 (a mean squared deviation).
    double spread() const { return w * sxx - sx * sx; }
    double slope() const { return (w * sxy - sx * sy) / spread(); }  // spread() > 0
    double intercept(double b) const { return (sy - b * sx) / w; }  // w > 0, for a slope b
};

// Step time t(n) = fixed + per_token * n, fitted by exponentially weighted least squares.
class StepCostModel {
  public:
    // n_streams: how many generating slots the step carried (0: not known). Steps of the same size cost
    // differently with the number of streams: four streams' plain 4-token step took 55-66 ms where one
    // stream's token with a 3-token draft took 73.
    void observe(double n_tokens, double seconds, int32_t n_streams = 0);
    // Cost of one extra token relative to a plain one-token step (a prior until the fit has spread).
    double extra_token_ratio() const;
    double step_seconds(double n_tokens) const;
    // Seconds of a step of n tokens as measured: the fit times the recent mean ratio of steps of exactly
    // n tokens (and n_streams streams, where given) to it, leaning on the ratio of all steps of n tokens
    // while few with those streams were seen, and on the fit while few of n tokens were (steps do not
    // grow evenly: kernels work in tiles of rows, so one token more than a tile costs about a whole tile).
    double measured_seconds(int32_t n, int32_t n_streams = 0) const;
    // What k more tokens add to a step of n tokens, relative to that step (measured_seconds); the prior
    // per token until a slope has been fitted. Never less than half the fitted slope's k tokens: sizes
    // seen a few times are noisy, and a base size that happens to read slow must not make every larger
    // step look free (one stream's 4-token steps, read at four streams, made drafts look free there).
    double extra_cost(int32_t n, int32_t k, int32_t n_streams = 0) const;

  private:
    static constexpr int32_t kTable = 128, kStreams = 16;
    // Per step size: decayed weight and time / fit. Per number of streams and step size: decayed weight
    // and seconds (not ratios to the fit: the fit moves when the number of streams changes, which would
    // move what a ratio means).
    double tab_w_[kTable + 1] = {}, tab_r_[kTable + 1] = {};
    double st_w_[kStreams + 1][kTable + 1] = {}, st_t_[kStreams + 1][kTable + 1] = {};
    int64_t st_seen_[kStreams + 1][kTable + 1] = {};  // the observation that last updated the cell
    // Per number of streams, the least seconds of any size above n seen lately (the bound in
    // measured_seconds): rebuilt for a row once per observation when asked, since the controllers ask
    // for many sizes at every step and scanning the row each time cost a four-stream step 3 %.
    mutable double bound_[kStreams + 1][kTable + 2] = {};
    mutable int64_t bound_at_[kStreams + 1] = {};  // n_obs_ + 1 when the row was built (0: never)
    int64_t n_obs_ = 0;
    EwLineFit fit_;  // seconds over tokens
    // The per-token slope from the last window whose step sizes differed enough to fit it (< 0: none
    // yet). Kept while steps are all alike (drafting off), so that a known cost is not forgotten and
    // replaced by the prior, which would switch drafting on and off in turn.
    double slope_ = -1;
};

// Seconds a draft model takes to catch up on n tokens it has not seen, a + b * n, fitted over its draft
// calls by exponentially weighted least squares. b is what each token it misses adds to its next draft;
// a is its per-call overhead (priced apart). Dividing a catch-up's time by its tokens instead counted the
// overhead as per-token cost: 2.5-2.8 ms a token after 10-token prompts, against 0.5-1.1 ms for long ones.
class CatchUpCost {
  public:
    void observe(int32_t n_tokens, double seconds);
    // b; 0 until eight calls, of sizes that differ by a few tokens, have been seen.
    double per_token() const;

  private:
    EwLineFit fit_;  // seconds over tokens
};

class DraftController {
  public:
    // A draft must promise this many times the tokens per second of plain decoding: the cost model is
    // noisy. kMinGainAhead: for a stream that will finish before another stream of its steps anyway
    // (streams_ahead), whose saved steps shorten no one's wait but its own.
    static constexpr double kMinGain = 1.10, kMinGainAhead = 1.50;

    // n_max: the request's cap. extra_ratio: StepCostModel::extra_token_ratio(); draft_ratio: cost of
    // drafting one token relative to a plain target step (0 for n-gram drafters).
    int32_t want(int32_t n_max, double extra_ratio, double draft_ratio);
    // The same with what k extra tokens cost the step as measured, in plain steps (extra_cost(k)). n_floor:
    // the shortest draft the caller verifies (--draft-min, ngram-mod's n-min): lengths below it are not
    // chosen, and probes are at least that long, so that drafting can resume after a pause. draft_fixed:
    // what any draft costs besides its positions, in plain steps (a draft model first evaluates the tokens
    // it has not seen since its last draft: the last accepted draft token, the steps decoded plainly).
    // catch_up: what each step decoded without a draft adds to the next draft's cost, in plain steps (a
    // draft model evaluates every token it missed first): a probe after a long pause costs that much more.
    // probe_fixed: what a probe costs besides its positions (its own catch-up, not spread: a probe
    // usually fails and leaves drafting off); < 0: draft_fixed. n_streams: the slots that wait for the
    // step (decoding, or evaluating their prompt): a probe delays every one of them, and the probes of all
    // of them together may lose 1/n_streams of the share one stream alone may. min_gain: what a draft must
    // promise (kMinGain, or kMinGainAhead).
    int32_t want(int32_t n_max, const std::function<double(int32_t)>& extra_cost, double draft_ratio,
                 int32_t n_floor = 1, double draft_fixed = 0.0, double catch_up = 0.0,
                 double probe_fixed = -1.0, int32_t n_streams = 1, double min_gain = kMinGain);
    // The same with extra_cost[k] for k = 0..n_max already worked out (at least n_max + 1 entries): the
    // scheduler prices a step's extra tokens once for all its slots.
    int32_t want(int32_t n_max, std::span<const double> extra_cost, double draft_ratio, int32_t n_floor = 1,
                 double draft_fixed = 0.0, double catch_up = 0.0, double probe_fixed = -1.0,
                 int32_t n_streams = 1, double min_gain = kMinGain);
    // Whether this step may go without asking want(): the last answer, a few steps ago, was no draft and
    // not a probe, nothing was observed since and the number of streams and the gain asked for are the
    // same, so the answer would be the same (the acceptance has not moved; the step's prices move little
    // from one step to the next), and no probe falls due. Counts the step as want() would. Preparing drafts
    // cost four streams of a small model 1-1.5 % of their throughput (1.8 us of stories260K's 0.27 ms step);
    // skipping the question won back about 0.4 %.
    bool skip(int32_t n_streams, double min_gain = kMinGain);
    // A step verified n_drafted tokens and accepted n_accepted of them.
    void observe(int32_t n_drafted, int32_t n_accepted);
    double acceptance() const;
    // Whether the last want() asked for a probe (a draft the evidence does not justify) rather than a
    // draft that pays.
    bool probing() const { return probing_; }
    void reset();

  private:
    double acc_ = 0, rej_ = 0;  // decayed counts of accepted tokens and of rejections
    int32_t idle_steps_ = 0;    // steps since the last draft while drafting does not pay
    int32_t probe_every_ = 4;
    bool probing_ = false;
    int32_t skips_left_ = 0;    // steps skip() may still answer without want()
    int32_t idle_limit_ = 0;    // the idle steps after which the last declining want() would probe
    int32_t skip_streams_ = 0;  // the number of streams that answer was for
    double skip_gain_ = kMinGain;  // and the gain it asked for
    static constexpr int32_t kProbeCostEvery = 256;
    int32_t cost_probe_every_ = kProbeCostEvery;  // the same for a drafter too slow to pay at any acceptance
};

}  // namespace engine::spec
