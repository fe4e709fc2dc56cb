#include "engine/speculative/draft_controller.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace engine::spec {

namespace {
constexpr double kDecay = 0.98;        // about the last 50 observations count
constexpr double kPriorRatio = 0.05;   // an extra token costs 5 % of a step until measured
constexpr double kPriorAcc = 1.0, kPriorRej = 1.0;  // acceptance 0.5 before any evidence
constexpr int32_t kProbeLen = 2;
constexpr double kTableDecay = 0.95;  // per step size: about its last twenty steps
constexpr double kTablePrior = 2.0;   // the fit counts as two steps of each size
constexpr double kSlopeFloor = 0.5;   // extra tokens cost at least half the fitted slope
constexpr double kSeen = 2.0;         // a size with streams seen this much (decayed) bounds smaller ones,
constexpr int64_t kRecent = 128;      // when seen within this many steps
constexpr int32_t kProbeMaxEvery = 64;
constexpr int32_t kSkipSteps = 3;      // steps skip() may answer after a declining want()
constexpr double kProbeBudget = 0.04;  // the share of time probes may lose
// A drafter too slow to pay even when every token is accepted is probed to measure its cost again every
// 256 steps; a draft model half as often after each such probe, down to every 4096: its probe first
// evaluates every token it missed since the last one, which for a model as slow as the target costs
// about as much prefill as those tokens.
// (The first interval is DraftController::kProbeCostEvery.)
constexpr int32_t kProbeCostMaxEvery = 4096;
}  // namespace

void EwLineFit::add(double x, double y, double decay) {
    w = w * decay + 1;
    sx = sx * decay + x;
    sxx = sxx * decay + x * x;
    sy = sy * decay + y;
    sxy = sxy * decay + x * y;
}

void StepCostModel::observe(double n, double t, int32_t n_streams) {
    ++n_obs_;
    // A step the OS interrupted must not skew the costs for long: clipped to the range of what the fit
    // expects.
    const double fit = fit_.w > 0 ? step_seconds(n) : 0.0;
    if (fit > 0) t = std::clamp(t, 0.5 * fit, 3.0 * fit);
    fit_.add(n, t, kDecay);
    // Until the measured steps differ in size by about a token on average, the slope is unknown.
    if (fit_.spread() >= 0.25 * fit_.w * fit_.w) slope_ = std::max(fit_.slope(), 0.0);
    // Per size, how far steps of that size sit from the fit: the fit follows the costs as they drift (a
    // context grows, the machine gets busy), the ratios keep the shape the fit misses, and a ratio stays
    // meaningful while its size is not seen for a while.
    const long i = std::lround(n);
    if (fit > 0 && i >= 1 && i <= kTable) {
        tab_w_[i] = tab_w_[i] * kTableDecay + 1;
        tab_r_[i] = tab_r_[i] * kTableDecay + t / fit;
        if (n_streams >= 1 && n_streams <= kStreams) {
            st_w_[n_streams][i] = st_w_[n_streams][i] * kTableDecay + 1;
            st_t_[n_streams][i] = st_t_[n_streams][i] * kTableDecay + t;
            st_seen_[n_streams][i] = n_obs_;
        }
    }
}

double StepCostModel::measured_seconds(int32_t n, int32_t n_streams) const {
    const double fit = step_seconds((double)n);
    if (n < 1 || n > kTable) return fit;
    // Few steps of this size lean on the fit (ratio 1), many on their own ratio; few of this size with
    // these streams lean on the ratio of the size.
    const double size = fit * (tab_r_[n] + kTablePrior) / (tab_w_[n] + kTablePrior);
    if (n_streams < 1 || n_streams > kStreams) return size;
    const double t = (st_t_[n_streams][n] + kTablePrior * size) / (st_w_[n_streams][n] + kTablePrior);
    // A step never costs more than a larger one seen lately with as many streams: while a slot drafts at
    // every step, its plain size is not seen, and an old outlier or the other streams' sizes would hold
    // its price (four streams' plain step read 108 ms while their 6-token steps took 46). Lately: a size
    // seen only long ago says nothing of the machine's load now.
    double* bound = bound_[n_streams];
    if (bound_at_[n_streams] != n_obs_ + 1) {
        bound[kTable + 1] = std::numeric_limits<double>::infinity();
        for (int32_t m = kTable; m >= 1; --m) {
            const bool recent = st_w_[n_streams][m] >= kSeen && n_obs_ - st_seen_[n_streams][m] <= kRecent;
            bound[m] =
                recent ? std::min(bound[m + 1], st_t_[n_streams][m] / st_w_[n_streams][m]) : bound[m + 1];
        }
        bound_at_[n_streams] = n_obs_ + 1;
    }
    return std::min(t, bound[n + 1]);
}

double StepCostModel::extra_cost(int32_t n, int32_t k, int32_t n_streams) const {
    n = std::max(n, 1);
    const double base = measured_seconds(n, n_streams);
    if (k <= 0) return 0.0;
    // Until steps of different sizes have been seen, the fit is flat and every size would look free:
    // the prior instead (before this, the first drafts of a fresh server were as long as the cap).
    if (base <= 0 || slope_ < 0) return kPriorRatio * k;
    return std::max(measured_seconds(n + k, n_streams) - base, kSlopeFloor * slope_ * k) / base;
}

double StepCostModel::step_seconds(double n) const {
    if (fit_.w <= 0) return 0;
    const double b = std::max(slope_, 0.0);
    const double a = std::max(fit_.intercept(b), 1e-9);
    return a + b * n;
}

double StepCostModel::extra_token_ratio() const {
    if (fit_.w <= 0 || slope_ < 0) return kPriorRatio;
    const double one = step_seconds(1), two = step_seconds(2);
    return one > 0 ? std::max(two - one, 0.0) / one : kPriorRatio;
}

void CatchUpCost::observe(int32_t n, double t) {
    if (n <= 0) return;
    constexpr double kCatchUpDecay = 0.95;
    // A call the OS interrupted must not make tokens look dear for long: at most 3x what the fit expects.
    const double slope = per_token();
    if (slope > 0) t = std::min(t, 3.0 * (fit_.intercept(slope) + slope * n));
    fit_.add(n, t, kCatchUpDecay);
}

double CatchUpCost::per_token() const {
    // Sizes must differ by a few tokens on average before a slope means anything.
    if (fit_.w < 8.0 || fit_.spread() < 4.0 * fit_.w * fit_.w) return 0.0;
    return std::max(fit_.slope(), 0.0);
}

double DraftController::acceptance() const {
    return (acc_ + kPriorAcc) / (acc_ + rej_ + kPriorAcc + kPriorRej);
}

void DraftController::observe(int32_t n_drafted, int32_t n_accepted) {
    if (n_drafted <= 0) return;
    skips_left_ = 0;
    acc_ = acc_ * kDecay + n_accepted;
    rej_ = rej_ * kDecay + (n_accepted < n_drafted ? 1 : 0);
    if (n_accepted > 0) probe_every_ = 4;
}

void DraftController::reset() {
    *this = DraftController{};
}

int32_t DraftController::want(int32_t n_max, double extra_ratio, double draft_ratio) {
    const double per = std::max(extra_ratio, 0.0);
    return want(n_max, [per](int32_t k) { return per * k; }, draft_ratio);
}

int32_t DraftController::want(int32_t n_max, const std::function<double(int32_t)>& extra_cost,
                              double draft_ratio, int32_t n_floor, double draft_fixed, double catch_up,
                              double probe_fixed, int32_t n_streams, double min_gain) {
    std::vector<double> table((size_t)std::max(n_max, 0) + 1, 0.0);
    for (int32_t k = 1; k <= n_max; ++k) table[(size_t)k] = extra_cost(k);
    return want(n_max, std::span<const double>(table), draft_ratio, n_floor, draft_fixed, catch_up,
                probe_fixed, n_streams, min_gain);
}

bool DraftController::skip(int32_t n_streams, double min_gain) {
    if (skips_left_ <= 0 || n_streams != skip_streams_ || min_gain != skip_gain_ ||
        idle_steps_ + 1 >= idle_limit_) {
        skips_left_ = 0;
        skip_streams_ = n_streams;  // what the want() that follows answers for
        skip_gain_ = min_gain;
        return false;
    }
    --skips_left_;
    ++idle_steps_;
    probing_ = false;
    return true;
}

int32_t DraftController::want(int32_t n_max, std::span<const double> extra_cost, double draft_ratio,
                              int32_t n_floor, double draft_fixed, double catch_up, double probe_fixed,
                              int32_t n_streams, double min_gain) {
    n_floor = std::max(n_floor, 1);
    probing_ = false;
    skips_left_ = 0;
    n_max = std::min(n_max, (int32_t)extra_cost.size() - 1);
    if (n_max < n_floor) return 0;
    // Expected tokens of a step with a k-token draft, each accepted with probability a (geometric):
    // 1 + a + a^2 + ... + a^k. Its cost: 1 + extra_cost(k) + k * draft + fixed plain steps.
    const double a = std::min(acceptance(), 0.999);
    const double draft = std::max(draft_ratio, 0.0), fixed = std::max(draft_fixed, 0.0);
    const auto cost = [&](int32_t k) {
        return 1.0 + std::max(extra_cost[(size_t)k], 0.0) + draft * k + fixed;
    };
    double best_gain = 1.0, tokens = 1.0, ak = 1.0;
    int32_t best_k = 0;
    for (int32_t k = 1; k <= n_max; ++k) {
        ak *= a;
        tokens += ak;
        const double gain = tokens / cost(k);
        if (k >= n_floor && gain > best_gain) {
            best_gain = gain;
            best_k = k;
        }
    }
    if (best_gain >= min_gain) {
        idle_steps_ = 0;
        cost_probe_every_ = kProbeCostEvery;
        return best_k;
    }
    // A stream ahead of the others asks for more than drafts that pay by the usual measure: it does not
    // probe either (its acceptance is not the question, and a probe would delay the streams behind it).
    if (min_gain > kMinGain) {
        skips_left_ = kSkipSteps;
        idle_limit_ = std::numeric_limits<int32_t>::max();
        return 0;
    }
    // Not worth it on the evidence: probe with a short draft now and then, less often while probes fail.
    // When even drafts that are always accepted would not pay (a draft model as slow as the target),
    // acceptance is not the question: probe only rarely, to measure the cost again.
    const double perfect = (1.0 + n_max) / cost(n_max);
    const bool too_costly = perfect < kMinGain && 2.0 / cost(1) < kMinGain;
    // A probe is a draft expected to lose: what it costs beyond the tokens it is expected to bring, in
    // plain steps, plus the catch-up of every step since the last draft. Probes come at most as often as
    // keeps that loss within kProbeBudget of the time: after i idle steps the loss is L + c * i, within
    // budget once i >= L / (B - c), and never when catching up alone costs more than the budget (a
    // draft model's probe beside three other streams loses up to two or three steps, and its catch-up
    // costs 5-9 % of a step per token there, 2-3 % at one stream: probing every few steps, as acceptance
    // alone would have it, cost four streams 5-15 % with drafting nearly off). A probe's own catch-up is
    // counted whole (probe_fixed): spread over the reply like a paying draft's, a draft model's probes
    // beside three other streams looked cheap and took the whole budget (four streams of the
    // TinyLlama-shaped pair 0.97x plain, drafting 3 % of the tokens). Beside other streams each probe
    // delays them all: the loss is counted in this slot's share of a step, and the room divided by the n
    // streams, so that the probes of all of them together lose at most kProbeBudget / n of the time (1 %
    // at four streams).
    const int32_t probe_len = std::min(std::max(kProbeLen, n_floor), n_max);
    double probe_tokens = 1.0, ap = 1.0;
    for (int32_t k = 1; k <= probe_len; ++k) probe_tokens += (ap *= a);
    const double probe_extra = probe_fixed >= 0 ? std::max(probe_fixed - fixed, 0.0) : 0.0;
    const double probe_loss = std::max(cost(probe_len) + probe_extra - probe_tokens, 0.0);
    const double room = kProbeBudget / std::max(n_streams, 1) - std::max(catch_up, 0.0);
    const int32_t budget_every = room > 0 ? (int32_t)std::min(std::ceil(probe_loss / room), 1e6) : 1000000;
    const int32_t limit = std::max(too_costly ? cost_probe_every_ : probe_every_, budget_every);
    if (++idle_steps_ < limit) {
        skips_left_ = kSkipSteps;
        idle_limit_ = limit;
        return 0;
    }
    idle_steps_ = 0;
    probing_ = true;
    // Only a drafter that costs time itself (a draft model, which catches up at each probe) backs off
    // further: an n-gram drafter's probe costs its verification alone.
    if (too_costly && draft + fixed > 0)
        cost_probe_every_ = std::min(cost_probe_every_ * 2, kProbeCostMaxEvery);
    else if (!too_costly)
        probe_every_ = std::min(probe_every_ * 2, kProbeMaxEvery);
    return probe_len;
}

}  // namespace engine::spec
