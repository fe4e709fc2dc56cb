// Request bodies -> generation options: sampling fields (llama-server and OpenAI names), limits, stop
// strings, grammars and structured output. Invalid values raise HttpError 400 with a clear message.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/lazy_trigger.h"
#include "engine/sampling/sampling_params.h"
#include "engine/tokenizer/vocab.h"
#include "server/api/json_fields.h"

namespace api {

// What one request may ask for, so that no request can slow the engine thread for everyone: stop strings
// and lazy-grammar triggers are checked after each token, n_probs alternatives go with each token, and a
// lookahead window rides in every step.
inline constexpr size_t kMaxStopStrings = 256;
inline constexpr size_t kMaxGrammarTriggers = 64;
inline constexpr int32_t kMaxNProbs = 100;
inline constexpr int64_t kMaxRequestLookaheadTokens = 256;

enum class Flavor { Native, Completions, Chat };

struct ApiDefaults {
    // -n: a request's limit when it names none, and the most any request may generate (> 0).
    int32_t n_predict = -1;
    int32_t n_keep = 0;  // --keep
    engine::SamplingParams sampling;
    std::string grammar;      // --grammar, --grammar-file, --json-schema: for requests that constrain nothing
    bool ignore_eos = false;  // --ignore-eos
    bool cache_prompt = true;  // --no-cache-prompt: requests reuse no cached prefix unless they ask
    // -r/--reverse-prompt: the stop strings of requests that give none (as llama-server's server mode)
    std::vector<std::string> stop;
};

struct GenerationOptions {
    int32_t n_predict = -1;
    engine::SamplingParams sampling;
    bool post_sampling_probs = false;
    std::vector<std::string> stop;
    bool ignore_eos = false;
    bool cache_prompt = true;
    int32_t n_keep = 0;  // context shift: prompt tokens kept besides BOS (-1: all)
    int id_slot = -1;
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage
    bool return_tokens = false;  // native: token ids in the response
    int n_choices = 1;           // OpenAI `n`
    bool logprobs = false;       // OpenAI: report log-probabilities
    int top_logprobs = 0;
    // Grammar (GBNF text; empty: none) and its lazy triggers.
    std::string grammar;
    bool grammar_lazy = false;
    engine::GrammarTriggers triggers;
    nlohmann::json trigger_list = nlohmann::json::array();  // the request's triggers, as generation_settings lists them
    // Speculative decoding: llama-server's `speculative.n_max`, `speculative.n_min`, `speculative.p_min`
    // (flat dotted keys or a `speculative` object; `"speculative": false` or n_max 0 turns it off).
    bool spec_disabled = false;
    int32_t spec_n_max = -1, spec_n_min = -1;  // -1: the server's
    float spec_p_min = -1.0f;
    // `lookahead: {w, n, g, fixed}` (-1: the server's --lookahead-*; fixed: -1 the server's, 0/1)
    int32_t la_w = -1, la_n = -1, la_g = -1;
    int la_fixed = -1;
    bool grammar_from_defaults = false;  // `grammar` is the server's default, not the request's
    bool grammar_from_schema = false;    // `grammar` is a response_format's or json_schema's value grammar

    // llama-server's native extras (see sched::Task for their meaning).
    int32_t n_indent = 0;
    double t_max_predict_ms = 0;
    bool timings_per_token = false;
    bool return_progress = false;
    int32_t n_cache_reuse = -1;  // -1: the server's --cache-reuse
    int32_t n_discard = 0;
    // Native: the fields of the final response to keep ("a/b" lifts b out of object a).
    std::vector<std::string> response_fields;
    bool echo = false;  // /v1/completions: the prompt is repeated before the generated text
    std::string model;  // the request's `model`, echoed back (empty: the server's name)
    // Tokens the reply may spend inside its reasoning block (<think>...) before the block is closed for
    // it (-1: no limit), and the text written before the closing tag then. Chat requests only: the
    // server's --reasoning-budget, a chat request's reasoning_budget_tokens / thinking_budget_tokens,
    // Anthropic's thinking.budget_tokens.
    int32_t reasoning_budget = -1;
    std::string reasoning_budget_message;
    // reasoning_control: the request can be told to end its reasoning while it runs
    // (POST /v1/chat/completions/control; reasoning_control.h).
    bool reasoning_control = false;
};

// raw_body is the request's text: JSON schemas are read from it in order (nlohmann::json sorts keys,
// and a schema's property order is the generated object's key order). Empty: use `body` as it is.
GenerationOptions parse_generation_options(const json& body, const ApiDefaults& defaults,
                                           const engine::Vocab& vocab, Flavor flavor,
                                           std::string_view raw_body = {});

// llama-server's mixed prompt: a string, or an array of strings and token ids, in order. Special tokens are
// added before the first element only (add_special); `what` names the field in errors ("prompt token id 7
// is outside the vocabulary"). Throws HttpError 400 for an id outside the vocabulary or another type.
std::vector<engine::Token> tokenize_mixed(const json& content, const engine::Vocab& vocab, bool add_special,
                                          bool parse_special, const std::string& what);

// The inputs of an embeddings request ('input' or 'content'): a string, an array of strings, an array of
// token ids, or an array of token-id arrays. Strings are tokenized with special tokens. Each input must be
// non-empty and at most `limit` tokens long (`too_long(n)` says why a longer one cannot be embedded).
// Throws HttpError 400.
std::vector<std::vector<engine::Token>> parse_embedding_inputs(const json& input, const engine::Vocab& vocab,
                                                               size_t limit,
                                                               const std::function<std::string(size_t)>& too_long);

}  // namespace api
