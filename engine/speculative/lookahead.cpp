#include "engine/speculative/lookahead.h"

#include <algorithm>
#include <cmath>

namespace engine::spec {

std::string lookahead_param_error(const LookaheadParams& p) {
    if (p.w < 1 || p.w > kLookaheadMaxW)
        return "lookahead W (window columns) must be in [1, " + std::to_string(kLookaheadMaxW) + "], got " +
               std::to_string(p.w);
    if (p.n < 2 || p.n > kLookaheadMaxN)
        return "lookahead N (n-gram size) must be in [2, " + std::to_string(kLookaheadMaxN) + "], got " +
               std::to_string(p.n);
    if (p.g < 1 || p.g > kLookaheadMaxG)
        return "lookahead G (verification branches) must be in [1, " + std::to_string(kLookaheadMaxG) + "], got " +
               std::to_string(p.g);
    return "";
}

int32_t lookahead_step_tokens(const LookaheadParams& p) {
    return (p.w + p.g) * (p.n - 1);
}

int32_t lookahead_step_reach(const LookaheadParams& p) {
    return std::max(p.w - 1 + p.n - 2, p.n - 1);
}

std::string lookahead_fit_error(const LookaheadParams& p, uint32_t n_batch, int32_t n_ctx_slot, int32_t n_lanes) {
    if (std::string e = lookahead_param_error(p); !e.empty()) return e;
    const auto wng = "lookahead W " + std::to_string(p.w) + ", N " + std::to_string(p.n) + ", G " +
                     std::to_string(p.g);
    if ((uint32_t)lookahead_step_tokens(p) > n_batch)
        return wng + ": a step of (W + G) * (N - 1) = " + std::to_string(lookahead_step_tokens(p)) +
               " tokens does not fit the batch (n_batch " + std::to_string(n_batch) + ")";
    if (lookahead_step_reach(p) + 2 > n_ctx_slot)
        return wng + ": the window reaches " + std::to_string(lookahead_step_reach(p)) +
               " positions ahead, more than a slot's context (" + std::to_string(n_ctx_slot) + " tokens) allows";
    if (lookahead_step_lanes(p) > n_lanes)
        return wng + ": a step needs W + G = " + std::to_string(lookahead_step_lanes(p)) +
               " sequence ids, the server has " + std::to_string(n_lanes) + " to spare";
    return "";
}

LookaheadParams lookahead_shrink_to_fit(LookaheadParams p, uint32_t n_batch, int32_t n_ctx_slot,
                                        int32_t n_lanes) {
    if (!lookahead_param_error(p).empty()) return p;
    LookaheadParams q = p;
    while (!lookahead_fit_error(q, n_batch, n_ctx_slot, n_lanes).empty()) {
        if (lookahead_step_reach(q) + 2 > n_ctx_slot) {  // only the window's width reaches ahead
            if (q.w == 1) return p;
            --q.w;
        } else {  // the step's tokens or lanes: W + G
            if (q.w == 1 && q.g == 1) return p;
            (q.w >= q.g && q.w > 1 ? q.w : q.g) -= 1;
        }
    }
    return q;
}

// ---- NgramPool

void NgramPool::reset(int32_t n, int32_t cap) {
    n_ = n;
    cap_ = std::max(cap, 1);
    size_ = 0;
    map_.clear();
}

void NgramPool::add(Token key, std::span<const Token> rest, std::span<const Token> before, bool text) {
    if (n_ < 2 || (int32_t)rest.size() != n_ - 1) return;
    const int32_t n_before = (int32_t)std::min(before.size(), (size_t)kMaxMatch);
    const auto set_context = [&](Entry& e) {
        std::copy_n(before.begin(), n_before, e.before.begin());
        e.n_before = n_before;
    };
    auto& list = map_[key];
    for (size_t i = 0; i < list.size(); ++i)
        if (std::equal(rest.begin(), rest.end(), list[i].rest.begin())) {
            if (n_before >= list[i].n_before) set_context(list[i]);
            list[i].text = list[i].text || text;
            std::rotate(list.begin(), list.begin() + (long)i, list.begin() + (long)i + 1);
            return;
        }
    if ((int32_t)list.size() >= cap_) {
        // Guesses go before text: a window adds several n-grams a step, which would otherwise push the
        // request's own n-grams (the ones that come true) out of a busy key.
        auto victim = std::find_if(list.rbegin(), list.rend(), [](const Entry& e) { return !e.text; });
        list.erase(victim != list.rend() ? std::next(victim).base() : std::prev(list.end()));
        --size_;
    }
    list.insert(list.begin(), Entry{std::vector<Token>(rest.begin(), rest.end()), {}, 0, text});
    set_context(list.front());
    ++size_;
}

void NgramPool::add_sequence(std::span<const Token> toks, size_t from) {
    if (n_ < 2 || toks.size() < (size_t)n_) return;
    std::array<Token, kMaxMatch> before{};
    for (size_t end = std::max(from, (size_t)n_ - 1); end < toks.size(); ++end) {
        const size_t start = end + 1 - (size_t)n_;
        const size_t nb = std::min(start, (size_t)kMaxMatch);
        for (size_t k = 0; k < nb; ++k) before[k] = toks[start - 1 - k];
        add(toks[start], toks.subspan(start + 1, (size_t)n_ - 1), std::span<const Token>(before).first(nb),
            true);
    }
}

std::span<const NgramPool::Entry> NgramPool::find(Token key) const {
    const auto it = map_.find(key);
    if (it == map_.end()) return {};
    return it->second;
}

int32_t NgramPool::context_match(const Entry& e, std::span<const Token> context) {
    const size_t cur = context.size() - 1;  // the key's index
    int32_t m = 0;
    while (m < e.n_before && (size_t)m < cur && e.before[(size_t)m] == context[cur - 1 - (size_t)m]) ++m;
    return m;
}

std::vector<std::vector<Token>> NgramPool::best(std::span<const Token> context, int32_t g,
                                                std::vector<int32_t>* matches) const {
    std::vector<std::vector<Token>> out;
    if (matches) matches->clear();
    if (context.empty() || g <= 0) return out;
    const std::span<const Entry> all = find(context.back());
    std::vector<std::pair<int, size_t>> order;  // (-match, recency)
    for (size_t i = 0; i < all.size(); ++i) {
        order.emplace_back(-context_match(all[i], context), i);
    }
    std::sort(order.begin(), order.end());
    for (const auto& [neg, i] : order) {
        if ((int32_t)out.size() >= g) break;
        out.push_back(all[i].rest);
        if (matches) matches->push_back(-neg);
    }
    return out;
}

int32_t NgramPool::best_match(std::span<const Token> context, int32_t* n_found) const {
    if (n_found) *n_found = 0;
    if (context.empty()) return -1;
    const std::span<const Entry> all = find(context.back());
    if (n_found) *n_found = (int32_t)all.size();
    int32_t best = all.empty() ? -1 : 0;
    for (const Entry& e : all) best = std::max(best, context_match(e, context));
    return best;
}

// ---- LookaheadState

void LookaheadState::begin(const LookaheadParams& p, std::span<const Token> prompt, bool keep_pool,
                           uint32_t seed) {
    p_ = p;
    rng_.seed(seed);
    lv_.assign((size_t)(p.n - 1), std::vector<Token>((size_t)p.w, 0));
    for (auto& level : lv_)
        for (Token& t : level) t = filler(prompt);
    if (!keep_pool || pool_.n() != p.n || pool_.cap() != std::max(p.g, 1) || pool_.size() > kMaxKeptPool)
        pool_.reset(p.n, p.g);
    pool_.add_sequence(prompt);
    history_seen_ = prompt.size();
}

Token LookaheadState::filler(std::span<const Token> history) {
    if (history.empty()) return 0;
    return history[std::uniform_int_distribution<size_t>(0, history.size() - 1)(rng_)];
}

LookaheadLayout LookaheadState::layout(Token x, std::span<const Token> context, int32_t w, int32_t g, int32_t budget,
                                       int32_t max_lanes, int32_t max_reach, int32_t branch_len) const {
    LookaheadLayout l;
    const int32_t n = p_.n;
    const int32_t bl = branch_len > 0 ? std::min(branch_len, n - 1) : n - 1;
    w = std::clamp(w, 0, p_.w);
    g = std::clamp(g, 0, p_.g);
    const Token alone[1] = {x};
    const std::span<const Token> ctx = !context.empty() && context.back() == x ? context : std::span<const Token>(alone);
    std::vector<int32_t> matches;
    const std::vector<std::vector<Token>> cands = g > 0 ? pool_.best(ctx, g, &matches) : std::vector<std::vector<Token>>{};
    g = std::min(g, (int32_t)cands.size());
    if (bl > max_reach) g = 0;
    w = std::min(w, std::max(max_reach - (n - 2) + 1, 0));
    const auto window_tokens = [&](int32_t ww) { return ww == 0 ? 0 : ww * (n - 1) - 1; };
    // The window is the investment, the branches the return: a crowded step drops columns first.
    while (w > 0 && (window_tokens(w) + g * bl > budget || w + g > max_lanes)) --w;
    while (g > 0 && (window_tokens(w) + g * bl > budget || w + g > max_lanes)) --g;
    // One column at N = 2 is the input alone: no window token to evaluate.
    if (window_tokens(w) == 0) w = 0;
    if (w == 0 && g == 0) return l;
    l.w = w;
    l.g = g;
    l.match = g > 0 ? matches[0] : -1;
    l.branch_len = bl;
    const auto push = [&](Token t, int32_t pos, std::vector<int32_t> lanes, bool logits) {
        l.tokens.push_back(t);
        l.pos.push_back(pos);
        l.lanes.push_back(std::move(lanes));
        l.logits.push_back(logits ? 1 : 0);
        return (int32_t)l.tokens.size();  // step index (the input is 0)
    };
    l.window_rows.assign((size_t)w, 0);
    for (int32_t i = 1; i < w; ++i) {
        std::vector<int32_t> lanes;
        for (int32_t k = i; k < w; ++k) lanes.push_back(k);
        const int32_t at = push(lv_[0][(size_t)i], i, std::move(lanes), n == 2);
        if (n == 2) l.window_rows[(size_t)i] = at;
    }
    for (int32_t j = 1; j <= n - 2; ++j)
        for (int32_t i = 0; i < w; ++i) {
            const int32_t at = push(lv_[(size_t)j][(size_t)i], i + j, {i}, j == n - 2);
            if (j == n - 2) l.window_rows[(size_t)i] = at;
        }
    for (int32_t b = 0; b < g; ++b) {
        const std::vector<Token> br(cands[(size_t)b].begin(), cands[(size_t)b].begin() + bl);
        l.branches.push_back(br);
        for (int32_t t = 0; t < bl; ++t) {
            const int32_t at = push(br[(size_t)t], t + 1, {w + b}, true);
            if (t == 0) l.branch_first.push_back(at);
        }
    }
    return l;
}

int32_t LookaheadState::branch_match(Token x, std::span<const Token> context, int32_t* n_found) const {
    const Token alone[1] = {x};
    const std::span<const Token> ctx =
        !context.empty() && context.back() == x ? context : std::span<const Token>(alone);
    return pool_.best_match(ctx, n_found);
}

void LookaheadState::update(const LookaheadLayout& l, Token x, std::span<const Token> column_next,
                            std::span<const Token> emitted, std::span<const Token> history) {
    const int32_t n = p_.n;
    const size_t top = (size_t)(n - 2);
    const int32_t w_run = std::min<int32_t>(l.w, (int32_t)column_next.size());
    // Each computed column's trajectory is an n-gram: L0[i] (x for column 0), L1[i], ..., L(N-2)[i], next.
    std::vector<Token> rest((size_t)(n - 1));
    for (int32_t i = 0; i < w_run; ++i) {
        for (int32_t j = 1; j <= n - 2; ++j) rest[(size_t)(j - 1)] = lv_[(size_t)j][(size_t)i];
        rest[(size_t)(n - 2)] = column_next[(size_t)i];
        const Token prev = i == 0 ? (history.size() >= 2 ? history[history.size() - 2] : -1)
                                  : i == 1 ? x : lv_[0][(size_t)(i - 1)];
        const Token before[1] = {prev};
        pool_.add(i == 0 ? x : lv_[0][(size_t)i], rest,
                  std::span<const Token>(before).first(prev >= 0 ? 1 : 0));
    }
    // The window moves one position per emitted token: levels move down (each token keeps its position);
    // the top level takes the new guesses, where a column has none the guess its right neighbour held for
    // the same position, and the last column a token drawn from the history.
    for (size_t step = 0; step < emitted.size(); ++step) {
        const std::vector<Token> old_top = lv_[top];
        for (size_t j = 0; j < top; ++j) lv_[j] = lv_[j + 1];
        for (size_t i = 0; i < (size_t)p_.w; ++i) {
            if (step == 0 && (int32_t)i < w_run)
                lv_[top][i] = column_next[i];
            else
                lv_[top][i] = i + 1 < (size_t)p_.w ? old_top[i + 1] : filler(history);
        }
    }
    // The request's own n-grams (prompt and output) are the best guesses there are.
    pool_.add_sequence(history, history_seen_);
    history_seen_ = history.size();
}

void LookaheadState::end(std::span<const Token> history) {
    pool_.add_sequence(history, history_seen_);
    history_seen_ = history.size();
}

// ---- LookaheadController

namespace {
constexpr double kDecay = 0.9;        // a shape: about its last ten observations count
constexpr double kPlainDecay = 0.98;  // plain steps: about the last fifty
constexpr double kMinObs = 1.9;       // two observations (0.9 + 1) before a shape may be chosen
constexpr double kMinGain = 1.10;     // a shape must give 10 % more tokens per second than plain steps (noise)
constexpr int64_t kProbeMinEvery = 16;
constexpr double kProbeCostSteps = 400.0;  // probe a shape costing c extra steps at most every 400 c steps
constexpr double kMinRatio = 0.02;         // before measuring, an extra token costs at least 2 % of a step
constexpr int64_t kNever = -1;
}  // namespace

int LookaheadController::bucket(int32_t n_streams) {
    return n_streams <= 1 ? 0 : n_streams == 2 ? 1 : n_streams <= 4 ? 2 : n_streams <= 8 ? 3 : 4;
}

void LookaheadController::reset(const LookaheadParams& p) {
    shapes_.clear();
    shapes_.push_back({0, 0});
    const auto add = [&](int32_t w, int32_t g) {
        for (const Shape& s : shapes_)
            if (s.w == w && s.g == g) return;
        shapes_.push_back({w, g});
    };
    // By cost: one branch, a few, a few beside a small window, every branch, everything.
    add(0, 1);
    add(0, std::min(p.g, 3));
    add(std::min(p.w, 4), std::min(p.g, 3));
    add(0, p.g);
    add(p.w, p.g);
    for (Stats& st : stats_) {
        st.w.assign(shapes_.size(), 0.0);
        st.tok.assign(shapes_.size(), 0.0);
        st.sec.assign(shapes_.size(), 0.0);
        st.last_probe.assign(shapes_.size(), kNever);
        st.step = 0;
    }
    extra_max_.assign(shapes_.size(), 0.0);
    for (size_t k = 0; k < shapes_.size(); ++k)
        extra_max_[k] =
            (double)((shapes_[k].w == 0 ? 0 : shapes_[k].w * (p.n - 1) - 1) + shapes_[k].g * (p.n - 1));
}

double LookaheadController::gain(int k, int32_t n_streams) const {
    const Stats& st = stats_[bucket(n_streams)];
    if (k < 0 || k >= (int)shapes_.size() || st.w[(size_t)k] <= 0 || st.w[0] <= 0) return 0.0;
    if (k == 0) return 1.0;
    const double rate = st.tok[(size_t)k] / std::max(st.sec[(size_t)k], 1e-12);
    const double plain = st.tok[0] / std::max(st.sec[0], 1e-12);
    return plain > 0 ? rate / plain : 0.0;
}

int LookaheadController::want(double extra_ratio, int32_t n_streams) {
    Stats& st = stats_[bucket(n_streams)];
    ++st.step;
    int best = 0;
    double best_gain = kMinGain;
    for (int k = 1; k < (int)shapes_.size(); ++k) {
        if (st.w[(size_t)k] < kMinObs || st.w[0] < kMinObs) continue;
        const double g = gain(k, n_streams);
        if (g > best_gain) {
            best_gain = g;
            best = k;
        }
    }
    // Probe a shape not measured for a while, cheapest first; the costlier it is, the rarer.
    const double r = std::max(extra_ratio, kMinRatio);
    const double t_plain = st.w[0] > 0 ? st.sec[0] / st.w[0] : 0.0;
    for (int k = 1; k < (int)shapes_.size(); ++k) {
        if (k == best) continue;
        const size_t i = (size_t)k;
        // A probe's extra time in plain steps: measured when it can be, else from the fitted ratio.
        const double cost = st.w[i] > 0 && t_plain > 0
                                ? std::max(st.sec[i] / st.w[i] / t_plain - 1.0, kMinRatio)
                                : r * extra_max_[i];
        const int64_t every = std::max(kProbeMinEvery, (int64_t)std::ceil(kProbeCostSteps * cost));
        // A shape never measured is probed at once when a probe costs at most a plain step (what pays
        // is learned early), else like the others: once its interval has passed.
        const int64_t since = st.last_probe[i] != kNever ? st.step - st.last_probe[i]
                              : cost <= 1.0              ? every
                                                         : st.step;
        if (since >= every) {
            // Counted when asked for, not only when observed: a step of branches alone still goes through
            // the branch gate, which may turn the probe down, and a shape never observed would otherwise
            // be probed again at every step.
            st.last_probe[i] = st.step;
            return k;
        }
    }
    return best;
}

void LookaheadController::observe(int k, int32_t n_emitted, double seconds, int32_t n_streams) {
    if (k < 0 || k >= (int)shapes_.size() || seconds <= 0) return;
    Stats& st = stats_[bucket(n_streams)];
    const size_t i = (size_t)k;
    const double d = k == 0 ? kPlainDecay : kDecay;
    st.w[i] = st.w[i] * d + 1.0;
    st.tok[i] = st.tok[i] * d + (double)(std::max(n_streams, 1) - 1 + n_emitted);
    st.sec[i] = st.sec[i] * d + seconds;
    if (k > 0) st.last_probe[i] = st.step;
}

// ---- BranchGate

namespace {
constexpr double kGateDecay = 0.9;    // about the last ten branch steps at a match length count
constexpr double kGateMinObs = 1.9;   // two of them before an estimate is trusted
constexpr double kGateMargin = 1.05;  // a branch step must emit 5 % more per unit of time than plain steps
constexpr int32_t kGateMaxProbeEvery = 64;
constexpr double kGateProbeShare = 0.03;  // probes may cost 3 % of the steps that consult the gate
constexpr double kGateMaxCredit = 16.0;
}  // namespace

void BranchGate::reset() {
    *this = BranchGate();
}

double BranchGate::survival(int32_t match, int32_t k) const {
    const int b = std::clamp(match, 0, kBuckets - 1);
    if (k < 1 || k > kMaxLen || trials_[b][k] <= 0) return -1.0;
    return hits_[b][k] / trials_[b][k];
}

int32_t BranchGate::length(int32_t match, int32_t max_len, int32_t n_branches,
                           const std::function<double(int32_t)>& extra_cost) {
    const int b = std::clamp(match, 0, kBuckets - 1);
    max_len = std::clamp(max_len, 0, kMaxLen);
    n_branches = std::max(n_branches, 1);
    const auto cost = [&](int32_t k) { return 1.0 + std::max(extra_cost(k * n_branches), 0.0); };
    int32_t best = 0;
    double best_rate = kGateMargin, expected = 0;
    for (int32_t k = 1; k <= max_len && trials_[b][k] >= kGateMinObs; ++k) {
        expected += hits_[b][k] / trials_[b][k];  // E[accepted] = sum over k of P(first k accepted)
        const double rate = (1.0 + expected) / cost(k);
        if (rate > best_rate) {
            best_rate = rate;
            best = k;
        }
    }
    // A probe once the bucket's interval has passed and the probe budget (a few percent of the time of
    // the steps consulted) covers its extra cost.
    // Probes are as long as could pay were every token accepted (none where nothing could: acceptance
    // is not the question there).
    credit_ = std::min(credit_ + kGateProbeShare, kGateMaxCredit);
    int32_t probe = 0;
    for (int32_t k = max_len; k >= 1 && probe == 0; --k)
        if ((1.0 + k) / cost(k) >= kGateMargin) probe = k;
    if (best == 0 && probe > 0 && ++since_[b] >= std::max(probe_every_[b], 1) && credit_ >= cost(probe) - 1.0) {
        since_[b] = 0;
        credit_ -= cost(probe) - 1.0;
        best = probe;
    }
    cost_[b] = cost(best);
    return best;
}

void BranchGate::observe(int32_t match, int32_t len, int32_t n_accepted) {
    const int b = std::clamp(match, 0, kBuckets - 1);
    len = std::clamp(len, 0, kMaxLen);
    for (int32_t k = 1; k <= len; ++k) {
        trials_[b][k] = trials_[b][k] * kGateDecay + 1.0;
        hits_[b][k] = hits_[b][k] * kGateDecay + (n_accepted >= k ? 1.0 : 0.0);
    }
    // Steps that do not pay space the probes out, steps that pay bring them closer: one lucky probe in a
    // bucket that rarely pays must not start probing it at every step again.
    const bool paid = 1.0 + (double)n_accepted >= cost_[b] * kGateMargin;
    const int32_t every = std::max(probe_every_[b], 1);
    probe_every_[b] = paid ? std::max(every / 2, 1) : std::min(every * 2, kGateMaxProbeEvery);
}

}  // namespace engine::spec
