// Lookahead decoding (Fu et al., "Break the Sequential Dependency of LLM Inference Using Lookahead
// Decoding", 2024) for one slot: a 2-D window of Jacobi iterations (W columns, N-1 levels) keeps guessing
// the tokens ahead and turns every column's trajectory into an N-gram for a pool keyed by its first
// token; up to G pooled n-grams that start with the slot's input token are verified in the same forward
// pass. Everything here is model-free bookkeeping: the scheduler puts a step's tokens into its batch,
// hands back the window's predictions, and verifies the branches with verify_tree_by_sampling.
//
// A step's layout, relative to the input token x at position p (lane = one scratch sequence id, so that
// no lane sees another's tokens; x belongs to every lane and to the slot's own sequence):
//   window column i (0 <= i < w), level j (0 <= j <= N-2) sits at position p + i + j; level 0 of column 0
//   is x itself. Level-0 tokens of column i belong to lanes i..w-1, higher levels to lane i only, so lane
//   i's chain is x, L0[1..i], L1[i], ..., L(N-2)[i]: consecutive positions, a causal sequence. The last
//   level's logits predict position p + i + N - 1.
//   branch b (0 <= b < g): its N-1 tokens at positions p+1 .. p+N-1, lane w+b, logits for every token.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/util/token_data.h"

namespace engine::spec {

struct LookaheadParams {
    int32_t w = 15;  // window columns
    int32_t n = 5;   // n-gram size (window levels + 1)
    int32_t g = 15;  // verification branches per step
    bool operator==(const LookaheadParams&) const = default;
};

inline constexpr int32_t kLookaheadMaxW = 64, kLookaheadMaxN = 16, kLookaheadMaxG = 64;

// "" when W, N and G are in range (W and G in [1, 64], N in [2, 16]); else what is wrong.
std::string lookahead_param_error(const LookaheadParams& p);
// Tokens of a full step, the input token included: (W + G) * (N - 1).
int32_t lookahead_step_tokens(const LookaheadParams& p);
// Scratch sequence ids a full step needs: W + G.
inline int32_t lookahead_step_lanes(const LookaheadParams& p) { return p.w + p.g; }
// Position offsets after the input token that a full step reaches: max(W - 1 + N - 2, N - 1).
int32_t lookahead_step_reach(const LookaheadParams& p);
// "" when a full step fits: its tokens in n_batch, its reach in a slot's context share, its lanes in the
// scratch sequence ids there are; else a message naming the limit.
std::string lookahead_fit_error(const LookaheadParams& p, uint32_t n_batch, int32_t n_ctx_slot, int32_t n_lanes);
// p with W and G lowered until a full step fits as lookahead_fit_error checks: W alone for the reach into
// the slot's context, the larger of W and G (W on a tie) for the step's tokens and lanes; p unchanged when
// even W = G = 1 does not fit (N is the user's choice: it is never lowered).
LookaheadParams lookahead_shrink_to_fit(LookaheadParams p, uint32_t n_batch, int32_t n_ctx_slot,
                                        int32_t n_lanes);

// N-grams keyed by their first token: per key at most `cap` continuations of N-1 tokens, most recently
// added first; adding one that is already there moves it to the front; when a key is full, its oldest
// window n-gram (a guess) falls out, or its oldest n-gram of the text when it holds no guesses. Each
// remembers up to kMaxMatch tokens seen before its key (one for a window n-gram: the token before its
// column), so that a lookup can prefer the continuations whose context matches; the context is stored,
// not looked up in the request, so that n-grams of earlier requests rank the same way.
class NgramPool {
  public:
    static constexpr int32_t kMaxMatch = 8;
    struct Entry {
        std::vector<Token> rest;
        // before[0]: the token right before the key, then further back.
        std::array<Token, kMaxMatch> before{};
        int32_t n_before = 0;
        bool text = false;  // from the request's tokens (add_sequence), not a window's guess
    };
    void reset(int32_t n, int32_t cap);
    // rest.size() == n - 1 (else ignored). before: the tokens before the key, nearest first (at most
    // kMaxMatch are kept); an n-gram added again keeps the longer of its two contexts.
    void add(Token key, std::span<const Token> rest, std::span<const Token> before = {}, bool text = false);
    // Every n-gram of toks (the request's tokens) that ends at index >= from (from 0: all of them).
    void add_sequence(std::span<const Token> toks, size_t from = 0);
    // Continuations of `key`, most recent first (empty span: none).
    std::span<const Entry> find(Token key) const;
    // At most g continuations of context.back(): by how many tokens before the key match the context's
    // (up to kMaxMatch), then most recent first. context: the request's tokens up to and including the
    // key. matches (optional): each one's matching context length, the same order.
    std::vector<std::vector<Token>> best(std::span<const Token> context, int32_t g,
                                         std::vector<int32_t>* matches = nullptr) const;
    // The longest context match among the continuations of context.back() (what best() ranks first),
    // -1 when there are none; n_found: how many there are. Copies nothing.
    int32_t best_match(std::span<const Token> context, int32_t* n_found = nullptr) const;
    size_t size() const { return size_; }
    int32_t n() const { return n_; }
    int32_t cap() const { return cap_; }

  private:
    // How many of the tokens before the key (context.back(), context not empty) match e's context.
    static int32_t context_match(const Entry& e, std::span<const Token> context);
    int32_t n_ = 0, cap_ = 0;
    size_t size_ = 0;
    std::unordered_map<Token, std::vector<Entry>> map_;
};

// One step's extra tokens (after the input token), in batch order: window, then branches.
struct LookaheadLayout {
    int32_t w = 0, g = 0;  // window columns and branches in this step
    std::vector<Token> tokens;
    std::vector<int32_t> pos;                 // offset from the input token's position
    std::vector<std::vector<int32_t>> lanes;  // 0..w-1 window columns, w..w+g-1 branches
    std::vector<uint8_t> logits;              // 1: the token's logits are read
    // Per window column, the step index (0: the input, k > 0: tokens[k-1]) whose logits predict its next token.
    std::vector<int32_t> window_rows;
    std::vector<std::vector<Token>> branches;  // g continuations of the input, branch_len tokens each
    int32_t branch_len = 0;
    std::vector<int32_t> branch_first;         // step index of each branch's first token
    int32_t match = -1;                        // the first branch's matching context (NgramPool::best)
    int32_t n_lanes() const { return w + g; }
    bool empty() const { return tokens.empty(); }
};

class LookaheadState {
  public:
    // A new request: the window starts from tokens drawn from the prompt, the pool takes its n-grams.
    // With keep_pool the pool learned from the slot's earlier requests stays (when N and G are unchanged
    // and it holds at most kMaxKeptPool n-grams), so that a reply repeating an earlier reply's text, or
    // text of an earlier prompt, is drafted from it, as the n-gram drafters that keep a pool do.
    void begin(const LookaheadParams& p, std::span<const Token> prompt, bool keep_pool = false,
               uint32_t seed = 0x1a4eadu);
    static constexpr size_t kMaxKeptPool = size_t{1} << 16;
    const LookaheadParams& params() const { return p_; }
    const NgramPool& pool() const { return pool_; }

    // The step for input token x (context: the request's tokens up to and including x; empty: x alone)
    // with at most w columns and g branches, shrunk to fit `budget` extra tokens, `max_lanes` lanes and
    // positions up to `max_reach` after x (the window shrinks first, then the branches). Branches carry
    // the first branch_len tokens of their n-gram (0: all N-1). Empty when nothing fits or nothing is
    // worth verifying.
    LookaheadLayout layout(Token x, std::span<const Token> context, int32_t w, int32_t g, int32_t budget,
                           int32_t max_lanes, int32_t max_reach, int32_t branch_len = 0) const;
    // For a step of branches alone, before building it: the context match of the best branch for input
    // token x (-1: no continuation of x in the pool) and how many branches there are (n_found).
    int32_t branch_match(Token x, std::span<const Token> context, int32_t* n_found) const;
    // After a step that emitted `emitted` (at least one token: accepted branch tokens and the target's
    // own): column_next[i] is the target's greedy pick at window_rows[i]. The window's trajectories go to
    // the pool and the window moves along with the emitted tokens. Also right after a plain step (an
    // empty layout), so the window keeps its place. `history` (the request's tokens up to and including
    // x, not yet the emitted ones) fills the window's new guesses where it has none and feeds the pool
    // its n-grams.
    void update(const LookaheadLayout& l, Token x, std::span<const Token> column_next,
                std::span<const Token> emitted, std::span<const Token> history);

    // The request ended with this history: its last n-grams go to the pool too (update() sees the
    // tokens only up to each step's input), for the slot's next request.
    void end(std::span<const Token> history);

    // The window, for tests: level j, column i (level 0, column 0 stands for the input token).
    Token window(int32_t level, int32_t column) const { return lv_[(size_t)level][(size_t)column]; }

  private:
    Token filler(std::span<const Token> history);

    LookaheadParams p_;
    std::vector<std::vector<Token>> lv_;  // N-1 levels of W tokens
    NgramPool pool_;
    std::mt19937 rng_;
    size_t history_seen_ = 0;  // history n-grams ending before this index are in the pool
};

// How big a lookahead step pays, measured: a ladder of step shapes (plain, one branch, three, three
// beside a small window, every branch, the full window). For each shape the slot keeps decayed sums of
// the time of the iterations it ran in and of the tokens those iterations emitted in all (its own plus
// one for each other stream), so a shape's gain is its aggregate tokens per second over that of plain
// steps: measured on the machine as it is, what a window costs the other streams included. A shape is
// chosen when it has been measured at least twice and beats plain steps by a margin. Shapes are probed
// now and then, the costlier the rarer (a probe of a shape that costs c plain steps at most every 400 c
// steps), so that probing costs about 1 % at most; before a shape is measured, its cost is estimated
// from the scheduler's fitted cost of an extra token. All of it per bucket of stream counts.
class LookaheadController {
  public:
    struct Shape {
        int32_t w = 0, g = 0;
    };
    void reset(const LookaheadParams& p);
    // The shape for this step (index into shapes(); 0 = plain) when n_streams slots decode in it.
    // extra_ratio: the fitted cost of one extra token relative to a plain step (for probes of shapes not
    // measured yet).
    int want(double extra_ratio, int32_t n_streams = 1);
    // A decode step of this slot ran shape `level` (0: plain) in an iteration of `seconds` that carried
    // n_streams decode steps (this one included), and emitted n_emitted tokens for this slot.
    void observe(int level, int32_t n_emitted, double seconds, int32_t n_streams);
    const std::vector<Shape>& shapes() const { return shapes_; }
    // Aggregate tokens per second of iterations with this shape over those with plain steps, at this
    // number of streams (0: not measured).
    double gain(int level, int32_t n_streams = 1) const;

  private:
    // What a shape gains depends on how many streams share the step: on a CPU an extra token costs a
    // share of a step of one stream that it does not cost of a step of four, and the aggregate rates of
    // the two are not comparable. So each bucket of stream counts (1, 2, 3-4, 5-8, more) keeps its own.
    static constexpr int kStreamBuckets = 5;
    static int bucket(int32_t n_streams);
    struct Stats {
        std::vector<double> w, tok, sec;  // decayed observation weight, aggregate tokens, seconds
        std::vector<int64_t> last_probe;  // step of the last observation of each shape
        int64_t step = 0;                 // consultations at these stream counts
    };
    std::vector<Shape> shapes_;
    std::vector<double> extra_max_;  // extra tokens of a full step of each shape
    Stats stats_[kStreamBuckets];
};

// How many tokens of branches alone (no window) a step verifies, judged per step: a branch whose key's
// context matches m tokens of the request (NgramPool::best) fares about as earlier branches with the same m
// did. Per m, the slot keeps decayed counts of how often a branch's first k tokens were all accepted; the
// length chosen maximizes expected tokens emitted per unit of time (an extra token costs extra_ratio of a
// plain step), and must beat a plain step by a margin. An m not measured yet, or one that stopped paying,
// is probed now and then (less often while probes fail, within a budget of a few percent of the time), so
// that a loop the request falls into is noticed within a few steps.
class BranchGate {
  public:
    void reset();
    // Tokens per branch for this step (0: a plain step). max_len: N-1; n_branches: the step's branches;
    // extra_cost(k): what k extra tokens in the step cost, in this slot's plain steps.
    int32_t length(int32_t match, int32_t max_len, int32_t n_branches, const std::function<double(int32_t)>& extra_cost);
    // A step of branches `len` tokens long, the first matching `match` tokens, got n_accepted accepted.
    void observe(int32_t match, int32_t len, int32_t n_accepted);
    // Estimated chance that the first k tokens of a branch at this match are accepted (-1: not measured).
    double survival(int32_t match, int32_t k) const;

  private:
    static constexpr int kBuckets = NgramPool::kMaxMatch + 1, kMaxLen = kLookaheadMaxN - 1;
    double trials_[kBuckets][kMaxLen + 1] = {}, hits_[kBuckets][kMaxLen + 1] = {};
    double cost_[kBuckets] = {};  // the last step's cost in plain steps, as length() weighed it
    int32_t since_[kBuckets] = {}, probe_every_[kBuckets] = {};
    double credit_ = 16.0;  // what probes may still cost, in plain steps (kGateMaxCredit: a new slot probes at once)
};

}  // namespace engine::spec
