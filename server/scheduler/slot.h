// A slot: one sequence of the unified KV cache serving one request at a time.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/sampling/sampler_chain.h"
#include "engine/speculative/draft_controller.h"
#include "engine/speculative/drafter.h"
#include "engine/speculative/lookahead.h"
#include "engine/tokenizer/vocab.h"
#include "server/scheduler/task.h"
#include "server/scheduler/token_pipeline.h"

namespace sched {

enum class SlotState { Idle, WaitOther, Started, ProcessingPrompt, DonePrompt, Generating };
const char* slot_state_name(SlotState s);

struct Slot {
    int id = 0;
    SlotState state = SlotState::Idle;
    std::shared_ptr<Task> task;

    // What the KV cache holds for this slot's sequence: cache_tokens[i] at position i. It outlives the
    // request, so that the next prompt with the same prefix starts where this one left off.
    std::vector<engine::Token> cache_tokens;
    std::vector<float> cache_lora;  // the LoRA scales cache_tokens were computed with
    uint64_t last_used = 0;      // for choosing which idle slot's cache to overwrite
    size_t prompt_pos = 0;       // next prompt token to evaluate
    int32_t n_cached = 0;        // prompt tokens reused from the cache
    bool truncated = false;      // a context shift dropped tokens of the request, or the full context ended it
    engine::Token pending = -1;  // sampled, shown, not yet evaluated
    // Extra tokens evaluated after `pending` in this step (a speculative draft), verified afterwards.
    std::vector<engine::Token> draft;
    // Speculation: the distributions a draft model drew the draft from (p/q verification; empty: verify
    // by sampling), the drafter it came from, the request's settings, and per drafter kind the
    // controller that decides how long a draft pays.
    std::vector<std::vector<float>> draft_q;
    int draft_from = -1;
    bool spec_on = false;
    int32_t spec_n_max = 0, spec_n_min = 0;
    float spec_p_min = 0.0f;
    std::mt19937 spec_rng;
    std::array<engine::spec::DraftController, engine::spec::kDrafterTypes> draft_ctl;
    // Tokens per step while drafting as usual (the request's recent steps, Scheduler::note_pace), and
    // whether this step's drafts were held to more because the slot is ahead of the others
    // (streams_ahead.h).
    double pace = 1.0;
    bool ahead = false;
    // The server's n-gram drafters, one object each, kept across this slot's requests.
    std::vector<std::unique_ptr<engine::spec::Drafter>> drafters;
    std::vector<engine::Token> history;  // the request's prompt and every token it emitted
    // Lookahead (--spec-type lookahead): the window and n-gram pool of the request, the controller that
    // picks each step's shape (kept across requests with the same W, N, G), and this step's layout: when
    // it is not empty, `draft` holds its tokens and `la_seqs` the scratch sequence ids of its lanes.
    bool la_on = false, la_fixed = false;
    engine::spec::LookaheadState la;
    engine::spec::LookaheadController la_ctl;
    engine::spec::BranchGate la_gate;  // whether a step of branches alone pays, by their context match
    engine::spec::LookaheadParams la_ctl_params{0, 0, 0};
    engine::spec::LookaheadLayout la_step;
    int la_level = 0;
    bool la_gated = false;  // this step's branches were sized by la_gate (which learns from its outcome)
    int la_obs_level = -1;      // this iteration's step for the controller: its shape (0: plain), -1: none
    int32_t la_obs_emitted = 0;
    std::vector<engine::SeqId> la_seqs;
    int64_t la_steps = 0, la_evaluated = 0, la_accepted = 0;  // this request's lookahead steps

    std::optional<engine::SamplerChain> chain;
    std::optional<TokenPipeline> pipeline;  // detokenize, stop strings, limits
    // Tokens (and their probabilities, when asked for) whose text the pipeline still holds back: they go
    // out with it, or never when they spell the stop string. n_released: pipeline tokens already sent.
    std::vector<engine::Token> held_tokens;
    std::vector<engine::TokenProbs> held_probs;
    size_t n_released = 0;

    // Shared context (-kvu): a generating request whose cells an older request needed waits here, as its
    // sequence's state (engine/model/kv_state.h), until the cache has room again. Empty otherwise.
    std::vector<uint8_t> swapped;
    size_t swapped_tokens = 0;

    Timings timings;
    Clock::time_point t_start, t_prompt_done, t_last_token;
    std::string last_stopping_word;  // of the last finished request (/slots next_token)

    bool busy() const { return state != SlotState::Idle; }
    bool swapped_out() const { return !swapped.empty(); }
    // Generating with its sequence in the cache (not waiting in host memory).
    bool decoding() const { return state == SlotState::Generating && swapped.empty(); }
    int32_t n_past() const { return (int32_t)cache_tokens.size(); }
    int32_t n_decoded() const { return pipeline ? pipeline->n_decoded() : 0; }
};

// What /slots shows of a slot.
struct SlotInfo {
    int id = 0;
    SlotState state = SlotState::Idle;
    uint64_t task_id = 0;
    int32_t n_ctx = 0;
    int32_t n_past = 0;
    int32_t n_prompt_tokens = 0;
    int32_t n_prompt_tokens_processed = 0;
    int32_t prompt_chunks = 0;
    int32_t n_decoded = 0;
    int32_t n_predict = -1;
    bool speculative = false;
    int32_t draft_n = 0, draft_n_accepted = 0;
    // Lookahead: the request's W, N, G (w = 0: off), its pool, its steps and their extra tokens evaluated
    // and accepted.
    engine::spec::LookaheadParams la{0, 0, 0};
    bool la_fixed = false;
    size_t la_pool = 0;
    int64_t la_steps = 0, la_evaluated = 0, la_accepted = 0;
    bool has_new_line = false;
    std::string stopping_word;  // the stop string that ended the last request
    std::shared_ptr<const Task> task;  // the request (its settings), while one is seated
};

}  // namespace sched
