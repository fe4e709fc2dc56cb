// A generation request as the scheduler sees it (already parsed and tokenized by the API layer) and
// the sink through which its output leaves the engine thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampling/sampling_params.h"
#include "engine/sampling/token_probs.h"
#include "engine/util/constraint.h"
#include "engine/util/token_data.h"

namespace sched {

using Clock = std::chrono::steady_clock;

struct Timings {
    int32_t cache_n = 0;   // prompt tokens reused from the cache
    int32_t prompt_n = 0;  // prompt tokens evaluated for this request
    double prompt_ms = 0.0;
    int32_t predicted_n = 0;
    double predicted_ms = 0.0;
    double ttft_ms = 0.0;           // arrival -> first generated token
    int32_t prompt_chunks = 0;      // scheduler iterations the prompt was spread over
    int32_t decode_iterations = 0;  // iterations in which this request got a decode step
    double queue_ms = 0.0;          // waiting for a free slot
    int32_t draft_n = 0;            // speculative draft tokens the target evaluated
    int32_t draft_n_accepted = 0;   // of those, tokens it accepted
};

// A request's speculative settings (llama-server's `speculative.*` fields); unset fields take the server's.
struct SpecOverrides {
    bool disabled = false;     // no speculation for this request
    int32_t n_max = -1;        // -1: the server's --draft-max
    int32_t n_min = -1;
    float p_min = -1.0f;
    // Lookahead (the request's `lookahead` object): -1 takes the server's --lookahead-w/-n/-g.
    int32_t la_w = -1, la_n = -1, la_g = -1;
    int la_fixed = -1;  // 1: every step the full window and branches (no adaptation); -1: the server's
};

// Prompt processing progress (llama-server's return_progress): prompt tokens in all, taken from the
// cache, processed so far (cached ones included), and the time since prompt processing started.
struct PromptProgress {
    int32_t total = 0, cache = 0, processed = 0;
    double time_ms = 0.0;
};

// One step of output: the text that may be shown now (stop-string candidates are held back) and the
// token(s) that produced it.
struct TokenOutput {
    std::string text;
    std::vector<engine::Token> tokens;
    std::vector<engine::TokenProbs> probs;  // one per token when n_probs > 0
    // The last token is the end-of-generation token that ended the request: it has no text, and the
    // native API reports it with its probabilities (as llama-server does), the OpenAI ones leave it out.
    bool ends_with_eos = false;
    std::optional<Timings> timings;          // the request's timings so far (timings_per_token)
    std::optional<PromptProgress> progress;  // a prompt chunk was processed (return_progress; no tokens)
    int32_t n_decoded = 0;                   // tokens generated so far
    int32_t n_prompt_tokens = 0;
    int32_t n_cached_tokens = 0;             // prompt tokens reused from the cache
    int slot_id = -1;
};

enum class FinishReason { Stop, Length };

struct FinalOutput {
    FinishReason finish = FinishReason::Length;
    bool stopped_eos = false;
    bool stopped_word = false;
    bool stopped_limit = false;
    std::string stopping_word;
    std::string content;                // the whole generated text (stop string excluded)
    std::vector<engine::Token> tokens;  // the tokens of the output (not a stop string's), an ending EOS included
    int32_t n_prompt_tokens = 0;        // prompt length (cached or not)
    int32_t n_cached_tokens = 0;        // prompt tokens reused from the cache
    bool truncated = false;             // a context shift dropped tokens of this request, or the full context ended it
    Timings timings;
    int slot_id = -1;
};

// Called on the engine thread; implementations must not block.
class TaskSink {
  public:
    virtual ~TaskSink() = default;
    virtual void on_tokens(const TokenOutput& out) = 0;
    virtual void on_done(const FinalOutput& out) = 0;
    // The request failed after it was accepted (e.g. no KV space). status is an HTTP-like code.
    virtual void on_error(int status, const std::string& message) = 0;
};

struct Task {
    uint64_t id = 0;
    std::vector<engine::Token> prompt;
    int32_t n_predict = -1;  // -1: until EOS or the context ends
    engine::SamplingParams sampling;
    bool post_sampling_probs = false;
    std::vector<std::string> stop;  // stop strings, not emitted
    // Control tokens the output shows as their text (a chat format's tool-call markers, which the
    // reply's parser must see); other control tokens show only with --special.
    std::vector<engine::Token> shown_tokens;
    bool ignore_eos = false;
    bool cache_prompt = true;  // reuse the longest prefix already in the KV cache
    int32_t n_keep = 0;        // context shift: prompt tokens kept besides BOS (-1: the whole prompt)
    int id_slot = -1;          // requested slot, -1: any
    // Each LoRA adapter's scale for this request (one per loaded adapter; 0: not applied). A cached
    // prefix computed with other scales is not reused.
    std::vector<float> lora;
    int32_t n_discard = 0;     // context shift: tokens dropped after the kept ones (0: half of them)
    int32_t n_cache_reuse = -1;  // reuse cached chunks of at least this many tokens by shifting; -1: the server's
    int32_t n_indent = 0;        // stop at a line indented less than this (code completion)
    double t_max_predict_ms = 0;  // stop at a new line once generating took longer than this (0: no limit)
    bool timings_per_token = false;  // each TokenOutput carries the timings so far
    bool return_progress = false;    // report each processed prompt chunk
    // For reports only (/slots): whether the client streams, and the grammar text.
    bool stream = false;
    std::string grammar_text;
    // Builds the grammar constraint for this request (nullptr: none). Called on the engine thread.
    std::function<std::unique_ptr<engine::TokenConstraint>()> make_grammar;
    bool grammar_first = false;
    SpecOverrides spec;
    std::shared_ptr<TaskSink> sink;
    Clock::time_point arrival = Clock::now();
    std::atomic<bool> cancelled{false};
};

}  // namespace sched
